//! `giving train`: trains a bundled model under the Overseer with the instruments the options
//! ask for, and prints progress lines from a pipeline (or shows the dashboard).

use std::process::ExitCode;

use anyhow::{Result, anyhow};
use clap::Args;
use giving::Event;
use giving::prelude::*;
use giving::vocab::{RateEvent, keys};
use giving_instruments::{InstrumentArgs, Overseer};
use giving_models::{ModelKind, TrainConfig, TrainReport};

use crate::common::{Common, check_device};
use crate::exit::exit_code;
use crate::out::say;
use crate::probes::{ProbeArgs, print_probed};
use crate::publish::PublishArgs;

#[derive(Debug, Args)]
pub(crate) struct TrainArgs {
    #[command(flatten)]
    common: Common,
    /// Stop after N steps in total.
    #[arg(long, conflicts_with = "epochs")]
    steps: Option<usize>,
    /// Number of epochs [default: the model's].
    #[arg(long)]
    epochs: Option<usize>,
    /// Train with burn-train's `Learner` instead of the bundled loop (mlp only; observed
    /// through giving-burn's logger, renderer and stop bridge: every instrument flag works).
    #[arg(long, conflicts_with = "steps")]
    learner: bool,
    /// Print a progress line every N steps (0: only epochs and the summary).
    #[arg(long, default_value_t = 100)]
    every: u64,
    /// Instruments: rate (always), log, early stop, monitors.
    #[command(flatten)]
    pub(crate) instruments: InstrumentArgs,
    #[command(flatten)]
    probes: ProbeArgs,
    /// `--publish URL --run NAME [--rank R]`.
    #[command(flatten)]
    publish: PublishArgs,
}

/// Turns the run's events into progress lines: one per `every` steps with the latest rate
/// from the `Rate` instrument, one per validation.
struct Progress {
    model: ModelKind,
    every: u64,
    rate: Option<f64>,
}

impl Progress {
    fn line(&mut self, event: &Event) -> Option<String> {
        if let Some(reading) = RateEvent::of(event) {
            if reading.units == "items/s" {
                self.rate = Some(reading.rate);
            }
            return None;
        }
        let line = progress_line(self.model, self.every, event)?;
        Some(match (self.rate, event.has(keys::LOSS)) {
            (Some(rate), true) => format!("{line}  {rate:>8.0} {}/s", self.model.item_name()),
            _ => line,
        })
    }
}

/// A progress line for a loss event (every `every` steps) or a validation event.
fn progress_line(model: ModelKind, every: u64, event: &Event) -> Option<String> {
    let epoch = event.get_as::<u64>(keys::EPOCH).ok()?;
    // One validation line per epoch: burn-train's Learner also gives every validation batch
    // (with its `iteration`); its epoch's mean comes as one event without it (`epoch_end`).
    if event.has(keys::ACCURACY) && !event.has(keys::ITERATION) {
        let accuracy = event.get_as::<f64>(keys::ACCURACY).ok()?;
        let val_loss = event.get_as::<f64>(keys::VAL_LOSS).ok()?;
        return Some(format!(
            "[{model}] epoch {epoch} validation: loss {val_loss:.4}  accuracy {:.2}%",
            100.0 * accuracy
        ));
    }
    let step = event.get_as::<u64>(keys::GLOBAL_STEP).ok()?;
    if every == 0 || (step + 1) % every != 0 {
        return None;
    }
    // Reading the loss resolves the lazy tensor here, on the pipeline's thread.
    let loss = event.get_as::<f64>(keys::LOSS).ok()?;
    Some(format!(
        "[{model}] epoch {epoch} step {:>5}  loss {loss:.4}",
        step + 1
    ))
}

pub(crate) fn train(mut args: TrainArgs) -> Result<ExitCode> {
    let common = &args.common;
    check_device(&common.device)?;
    let mut config = common.config()?;
    config.steps = args.steps;
    if let Some(epochs) = args.epochs {
        config.epochs = epochs;
    }
    if let Some(steps) = args.steps {
        // Enough epochs to reach the asked steps.
        let per_epoch = (config.train_size / config.batch_size.max(1)).max(1);
        config.epochs = steps.div_ceil(per_epoch);
    }
    let model = common.model()?;
    if args.learner && model != ModelKind::Mlp {
        return Err(anyhow!(
            "--learner trains the mlp only (burn-train's Learner), not {model}"
        ));
    }
    // Bad settings are refused before anything is printed or created (a log file).
    config.validate()?;
    let probes = args.probes.instrument()?;
    args.instruments.params = params(model, &common.device.to_string(), &config);
    let instruments = args.instruments.instruments()?;
    let publisher = args.publish.publisher()?;
    say!("{}", banner(model, &common.device.to_string(), &config));

    // The loop only gives; the instruments and the progress lines attach from outside.
    let every = args.every;
    let mut overseer = Overseer::new();
    // Probes come first: the rate and the log then see their events, the last ones included.
    if let Some(probes) = probes {
        overseer = overseer.with(probes);
        if !args.instruments.dash.dash {
            overseer = print_probed(overseer, model);
        }
    }
    overseer = overseer.with_all(instruments);
    if let Some(publisher) = publisher {
        overseer = overseer.with(publisher);
    }
    // The dashboard shows progress itself: no progress lines over it.
    if !args.instruments.dash.dash {
        overseer = overseer.instrument_fn("progress", move |start| {
            let mut progress = Progress {
                model,
                every,
                rate: None,
            };
            let lines = start
                .given()
                .stream()
                .paced(giving_instruments::SINK_PACE)
                .where_any([keys::LOSS, keys::ACCURACY, keys::RATE])
                .filter_map(move |event| progress.line(&event))
                .for_each(|line| say!("{line}"));
            start.spawn(lines);
            Ok(())
        });
    }
    let learner = args.learner;
    let run = overseer.run(|| {
        if learner {
            giving_models::learner::train_learner(&config, &common.device)
        } else {
            giving_models::train(model, &config, &common.device)
        }
    });
    let code = run.exit_code();
    if !run.problems.is_empty() {
        eprintln!(
            "[{model}] {} instrument problem(s) were reported above; training went on",
            run.problems.len()
        );
    }
    let report = run
        .output
        .map_err(|panic| anyhow!("training panicked: {panic}"))??;
    print_summary(model, &report);
    Ok(exit_code(code))
}

/// The first line of a run: the model, the device, then every setting of [`TrainConfig`] by
/// name, read through `Serialize` (so a new setting shows without another edit).
fn banner(model: ModelKind, device: &str, config: &TrainConfig) -> String {
    let settings: Vec<String> = config
        .params()
        .into_iter()
        .map(|(name, value)| format!("{name} {value}"))
        .collect();
    format!(
        "[{model}] training on {device} — {} (sizes in {})",
        settings.join(", "),
        model.item_name()
    )
}

/// The run's configuration, as the MLflow run's params: the model, the device, then every
/// setting of [`TrainConfig`] by name.
fn params(model: ModelKind, device: &str, config: &TrainConfig) -> Vec<(String, String)> {
    let mut params = vec![
        ("model".to_owned(), model.to_string()),
        ("device".to_owned(), device.to_owned()),
    ];
    params.extend(config.params());
    params
}

fn print_summary(model: ModelKind, report: &TrainReport) {
    let mut summary = format!(
        "[{model}] done: {} steps in {} epoch(s){}, final loss {:.4}",
        report.steps,
        report.epochs,
        if report.stopped {
            " (stopped early)"
        } else {
            ""
        },
        report.final_loss,
    );
    if let (Some(accuracy), Some(val_loss)) = (report.accuracy, report.val_loss) {
        summary += &format!(
            ", validation loss {val_loss:.4}, accuracy {:.2}%",
            100.0 * accuracy
        );
    }
    summary += &format!(
        ", {:.0} {}/s ({} in {:.2}s of training",
        report.items_per_second(),
        model.item_name(),
        report.items,
        report.train_time.as_secs_f64(),
    );
    // The first window carries one-time costs; what a long run settles at is the figure
    // `giving bench` reports, so it is printed beside the whole run's.
    if let Some(steady) = report.steady_items_per_second() {
        summary += &format!(
            "; {steady:.0} {}/s after the first window",
            model.item_name()
        );
    }
    summary += ")";
    say!("{summary}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_validation_line_per_epoch_not_per_learner_batch() {
        let batch = Event::builder()
            .field(keys::EPOCH, 1u64)
            .field(keys::SPLIT, "valid")
            .field(keys::ITERATION, 3u64)
            .field(keys::VAL_LOSS, 0.5)
            .field(keys::ACCURACY, 0.75)
            .build();
        assert_eq!(progress_line(ModelKind::Mlp, 100, &batch), None);
        let epoch = Event::builder()
            .field(keys::EPOCH, 1u64)
            .field(keys::SPLIT, "valid")
            .field(keys::EPOCH_END, true)
            .field(keys::ACCURACY, 0.975)
            .field(keys::VAL_LOSS, 0.0625)
            .build();
        assert_eq!(
            progress_line(ModelKind::Mlp, 100, &epoch).as_deref(),
            Some("[mlp] epoch 1 validation: loss 0.0625  accuracy 97.50%")
        );
    }

    #[test]
    fn the_banner_names_every_setting_and_its_value() {
        let mut config = ModelKind::Mlp.default_config();
        assert_eq!(
            banner(ModelKind::Mlp, "flex", &config),
            "[mlp] training on flex — batch_size 64, epochs 10, lr 0.001, seed 0, \
             train_size 15000, valid_size 2000, window 10 (sizes in images)"
        );
        config.steps = Some(4);
        assert!(
            banner(ModelKind::CharLm, "cuda:1", &config).contains("steps 4, train_size"),
            "a set step limit is shown"
        );
    }
}
