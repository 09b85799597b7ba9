//! The bundled MLP on the procedural digits trained with burn-train's `Learner` on `flex`,
//! observed with giving's dashboard, MessagePack log and rate: copy it to observe your own
//! Learner. `cargo run -p giving-models --features learner --example learner [LOG_DIR]`
//! (`q` in the dashboard stops the Learner cleanly; the log still gets its end record).
//!
//! What a burn-train user adds is in `giving_models::learner::train_mlp_learner`:
//! `.with_metric_logger(GivingLogger::new())`, `.renderer(GivingRenderer::new())` and
//! `StopBridge::current(training.interrupter())`, all inside the Overseer's `run`.

use giving_instruments::log::MsgpackLog;
use giving_instruments::{Dash, Overseer, Rate};
use giving_models::learner::train_learner;
use giving_models::{DeviceSpec, ModelKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The CPU backend's two process-wide settings, before burn runs anything (docs/burn.md).
    giving_burn::heap::keep_freed_memory();
    giving_burn::denormals::flush_denormals();
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "runs".to_string());
    let log = MsgpackLog::in_dir(&dir)?;
    let path = log.path().to_path_buf();
    let mut config = ModelKind::Mlp.default_config();
    config.epochs = 2;
    let run = Overseer::new()
        .with(Rate::new())
        .with(log)
        .with(Dash::new())
        .run(|| train_learner(&config, &DeviceSpec::Flex));
    let report = run.output.map_err(|panic| panic.to_string())??;
    println!(
        "{} steps in {} epoch(s){}, final loss {:.4}; log: {}",
        report.steps,
        report.epochs,
        if report.stopped { " (stopped)" } else { "" },
        report.final_loss,
        path.display()
    );
    Ok(())
}
