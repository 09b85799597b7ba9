//! The `giving` command: trains the bundled models and shows what their loops give.
//!
//! ```text
//! giving train <mlp|cnn|charlm> [--device D] [--steps N | --epochs N] [--batch-size N] [--lr X] [--seed N]
//!                                [--log DIR] [--stop [N]] [--gpu-poll [SECS]] [--cpu-poll [SECS]]
//!                                [--dash [--plot KEY]...]
//! giving bench <mlp|cnn|charlm> [--device D] [--steps N] [--repeats N]
//! giving log dump FILE [--json]
//! giving log stats FILE
//! ```

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand};
use giving::Event;
use giving::prelude::*;
use giving_instruments::{InstrumentArgs, LogCommand, Overseer};
use giving_models::{DeviceSpec, ModelKind, TrainConfig, TrainReport};

/// Train the bundled burn models and watch what their training loops give.
#[derive(Debug, Parser)]
#[command(name = "giving", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a model, printing progress from a pipeline subscribed to the loop's events.
    Train(TrainArgs),
    /// Measure training throughput (items/s) bare and with one subscriber, in the same process.
    Bench(BenchArgs),
    /// Read a MessagePack log written by `train --log`.
    #[command(subcommand)]
    Log(LogCommand),
}

/// Options shared by `train` and `bench`.
#[derive(Debug, Args)]
struct Common {
    /// The model: mlp, cnn or charlm.
    #[arg(value_parser = parse_model)]
    model: ModelKind,
    /// Device: flex (CPU), wgpu, wgpu:N, cuda or cuda:N (among the backends compiled in).
    #[arg(long, value_parser = parse_device, default_value_t = DeviceSpec::default())]
    device: DeviceSpec,
    /// Items per batch [default: the model's].
    #[arg(long)]
    batch_size: Option<usize>,
    /// Learning rate [default: the model's].
    #[arg(long)]
    lr: Option<f64>,
    /// Seed of the data, shuffling and initial parameters.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Training items per epoch [default: the model's].
    #[arg(long)]
    train_size: Option<usize>,
    /// Validation items per epoch [default: the model's].
    #[arg(long)]
    valid_size: Option<usize>,
    /// Steps per device-sync window [default: 10].
    #[arg(long)]
    window: Option<usize>,
}

impl Common {
    fn config(&self) -> TrainConfig {
        let mut config = self.model.default_config();
        config.seed = self.seed;
        if let Some(v) = self.batch_size {
            config.batch_size = v;
        }
        if let Some(v) = self.lr {
            config.lr = v;
        }
        if let Some(v) = self.train_size {
            config.train_size = v;
        }
        if let Some(v) = self.valid_size {
            config.valid_size = v;
        }
        if let Some(v) = self.window {
            config.window = v;
        }
        config
    }
}

#[derive(Debug, Args)]
struct TrainArgs {
    #[command(flatten)]
    common: Common,
    /// Stop after N steps in total.
    #[arg(long, conflicts_with = "epochs")]
    steps: Option<usize>,
    /// Number of epochs [default: the model's].
    #[arg(long)]
    epochs: Option<usize>,
    /// Print a progress line every N steps (0: only epochs and the summary).
    #[arg(long, default_value_t = 100)]
    every: u64,
    /// Instruments: rate (always), log, early stop, monitors.
    #[command(flatten)]
    instruments: InstrumentArgs,
}

#[derive(Debug, Args)]
struct BenchArgs {
    #[command(flatten)]
    common: Common,
    /// Steps per measured run.
    #[arg(long, default_value_t = 300)]
    steps: usize,
    /// Measured pairs of runs (bare, then observed), after one warm-up run.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Observe with the instruments chosen by the options below (rate always) instead of one
    /// subscriber that reads every loss.
    #[arg(long)]
    instrumented: bool,
    #[command(flatten)]
    instruments: InstrumentArgs,
}

fn parse_model(s: &str) -> Result<ModelKind, String> {
    s.parse().map_err(|e: giving_models::Error| e.to_string())
}

fn parse_device(s: &str) -> Result<DeviceSpec, String> {
    s.parse().map_err(|e: giving_models::Error| e.to_string())
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Train(args) => train(args),
        Command::Bench(args) => bench(args),
        Command::Log(command) => Ok(command.run()?),
    }
}

/// Checks that the device's backend is compiled in before generating any data.
fn check_device(device: &DeviceSpec) -> Result<()> {
    if !device.is_compiled() {
        bail!(giving_models::Error::BackendNotCompiled {
            backend: device.backend(),
            feature: device.backend(),
        });
    }
    Ok(())
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
        if let Ok(rate) = event.get_as::<f64>("rate") {
            if event.get("units").and_then(|u| u.as_str()) == Some("items/s") {
                self.rate = Some(rate);
            }
            return None;
        }
        let line = progress_line(self.model, self.every, event)?;
        Some(match (self.rate, event.has("loss")) {
            (Some(rate), true) => format!("{line}  {rate:>8.0} {}/s", self.model.item_name()),
            _ => line,
        })
    }
}

/// A progress line for a loss event (every `every` steps) or a validation event.
fn progress_line(model: ModelKind, every: u64, event: &Event) -> Option<String> {
    let epoch = event.get_as::<u64>("epoch").ok()?;
    if event.has("accuracy") {
        let accuracy = event.get_as::<f64>("accuracy").ok()?;
        let val_loss = event.get_as::<f64>("val_loss").ok()?;
        return Some(format!(
            "[{model}] epoch {epoch} validation: loss {val_loss:.4}  accuracy {:.2}%",
            100.0 * accuracy
        ));
    }
    let step = event.get_as::<u64>("global_step").ok()?;
    if every == 0 || (step + 1) % every != 0 {
        return None;
    }
    // Reading the loss resolves the lazy tensor here, on the pipeline's thread.
    let loss = event.get_as::<f64>("loss").ok()?;
    Some(format!(
        "[{model}] epoch {epoch} step {:>5}  loss {loss:.4}",
        step + 1
    ))
}

fn train(args: TrainArgs) -> Result<()> {
    let common = &args.common;
    check_device(&common.device)?;
    let mut config = common.config();
    config.steps = args.steps;
    if let Some(epochs) = args.epochs {
        config.epochs = epochs;
    }
    if let Some(steps) = args.steps {
        // Enough epochs to reach the asked steps.
        let per_epoch = (config.train_size / config.batch_size.max(1)).max(1);
        config.epochs = steps.div_ceil(per_epoch);
    }
    let model = common.model;
    println!(
        "[{model}] training on {} — {} epoch(s){}, batch {}, lr {}, seed {}, {} {} per epoch",
        common.device,
        config.epochs,
        config
            .steps
            .map(|s| format!(" (at most {s} steps)"))
            .unwrap_or_default(),
        config.batch_size,
        config.lr,
        config.seed,
        config.train_size,
        model.item_name(),
    );

    // The loop only gives; the instruments and the progress lines attach from outside.
    let instruments = args.instruments.instruments().map_err(|e| anyhow!(e))?;
    let every = args.every;
    let mut overseer = Overseer::new().with_all(instruments);
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
                .where_any(["loss", "accuracy", "rate"])
                .filter_map(move |event| progress.line(&event))
                .for_each(|line| println!("{line}"));
            start.spawn(lines);
            Ok(())
        });
    }
    let run = overseer.run(|| giving_models::train(model, &config, &common.device));
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
    if code != 0 {
        std::process::exit(code);
    }
    Ok(())
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
        ", {:.0} {}/s ({} in {:.2}s of training)",
        report.items_per_second(),
        model.item_name(),
        report.items,
        report.train_time.as_secs_f64(),
    );
    println!("{summary}");
}

/// How a benchmark run is observed.
enum Observer<'a> {
    /// Nobody listens.
    Bare,
    /// One subscriber that reads (resolves) every loss.
    Subscriber,
    /// The Overseer with these instruments.
    Instruments(&'a InstrumentArgs),
}

/// One training run of the benchmark.
fn bench_run(
    model: ModelKind,
    config: &TrainConfig,
    device: &DeviceSpec,
    observer: Observer<'_>,
) -> Result<TrainReport> {
    match observer {
        Observer::Bare => return Ok(giving_models::train(model, config, device)?),
        Observer::Instruments(args) => {
            let instruments = args.instruments().map_err(|e| anyhow!(e))?;
            let run = Overseer::new()
                .with_all(instruments)
                .quiet(true)
                .run(|| giving_models::train(model, config, device));
            if let Some(problem) = run.problems.first() {
                bail!("instrument problem: {problem}");
            }
            return Ok(run
                .output
                .map_err(|p| anyhow!("training panicked: {p}"))??);
        }
        Observer::Subscriber => {}
    }
    let gv = giving::given();
    // One subscriber that reads (resolves) every loss: the most a consumer asks of the loop.
    let losses = gv.spawn(gv.stream().key::<f64>("loss").count());
    let report = giving_models::train(model, config, device);
    gv.finish().context("benchmark subscriber failed")?;
    let seen = losses.join().context("benchmark subscriber failed")?;
    let report = report?;
    if seen as usize != report.steps {
        bail!(
            "the subscriber read {seen} losses for {} steps",
            report.steps
        );
    }
    Ok(report)
}

fn bench(args: BenchArgs) -> Result<()> {
    let common = &args.common;
    check_device(&common.device)?;
    let model = common.model;
    let mut config = common.config();
    config.steps = Some(args.steps);
    config.valid_size = 0;
    let per_epoch = (config.train_size / config.batch_size.max(1)).max(1);
    config.epochs = args.steps.div_ceil(per_epoch);
    println!(
        "[{model}] bench on {}: {} steps of batch {} per run, {} pair(s) of runs after a warm-up",
        common.device, args.steps, config.batch_size, args.repeats
    );
    let observed = || {
        if args.instrumented {
            Observer::Instruments(&args.instruments)
        } else {
            Observer::Subscriber
        }
    };
    let observed_name = if args.instrumented {
        "instrumented"
    } else {
        "one subscriber"
    };
    let warmup = bench_run(model, &config, &common.device, Observer::Bare)?;
    println!(
        "warm-up: {:.0} {}/s",
        warmup.items_per_second(),
        model.item_name()
    );
    let (mut bare, mut subscribed, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for repeat in 0..args.repeats.max(1) {
        let b = bench_run(model, &config, &common.device, Observer::Bare)?.items_per_second();
        let s = bench_run(model, &config, &common.device, observed())?.items_per_second();
        println!(
            "run {}: bare {b:.0} {items}/s, {observed_name} {s:.0} {items}/s (ratio {:.3})",
            repeat + 1,
            s / b,
            items = model.item_name(),
        );
        bare.push(b);
        subscribed.push(s);
        ratios.push(s / b);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "[{model}] median: bare {:.0} {items}/s, {observed_name} {:.0} {items}/s, ratio (median of pairs) {:.3}",
        median(bare),
        median(subscribed),
        median(ratios),
        items = model.item_name(),
    );
    Ok(())
}
