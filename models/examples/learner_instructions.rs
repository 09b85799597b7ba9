//! One Learner run, observed one way, for counting its instructions under callgrind: the
//! deterministic half of the Learner overhead figure (`giving bench --cpu-time --learner` is the
//! timed half, and it moves by several percent on this 2-core machine from run to run).
//!
//! ```text
//! cargo build --release -p giving-models --features learner --example learner_instructions
//! valgrind --tool=callgrind --separate-threads=yes \
//!     target/release/examples/learner_instructions burn|giving|giving-rate-log [BATCHES]
//! ```
//!
//! Every mode trains the same MLP on the same digits (same seed) for one epoch of `BATCHES`
//! batches of 64 plus one validation batch, so the counts differ only by who observes the
//! Learner: burn-train's `FileMetricLogger` and CLI renderer, giving's logger and renderer, or
//! giving's with the rate and MessagePack log instruments attached.

use giving_instruments::log::MsgpackLog;
use giving_instruments::{Overseer, Rate};
use giving_models::learner::{Observed, train_learner_observed};
use giving_models::{DeviceSpec, ModelKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "giving".to_string());
    let batches: usize = match args.next() {
        Some(text) => text
            .parse()
            .map_err(|_| format!("BATCHES must be a whole number, got {text:?}"))?,
        None => 100,
    };
    let mut config = ModelKind::Mlp.default_config();
    config.epochs = 1;
    config.train_size = batches * config.batch_size;
    config.valid_size = config.batch_size;
    let dir = std::env::temp_dir().join(format!("giving-learner-instr-{}", std::process::id()));
    let (observed, overseer) = match mode.as_str() {
        "burn" => (Observed::BurnDefault, Overseer::new()),
        "giving" => (Observed::Giving, Overseer::new()),
        "giving-rate-log" => (
            Observed::Giving,
            Overseer::new()
                .with(Rate::new())
                .with(MsgpackLog::in_dir(&dir)?),
        ),
        other => {
            return Err(
                format!("mode must be burn, giving or giving-rate-log, got {other:?}").into(),
            );
        }
    };
    let run = overseer.run(|| train_learner_observed(&config, &DeviceSpec::Flex, observed));
    let report = run.output.map_err(|panic| panic.to_string())??;
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{mode}: {} steps, final loss {:.4}",
        report.steps, report.final_loss
    );
    Ok(())
}
