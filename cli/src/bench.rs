//! `giving bench`: training items/s bare and observed, interleaved in the same process.

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use giving::prelude::*;
use giving_instruments::{InstrumentArgs, Overseer};
use giving_models::{DeviceSpec, ModelKind, TrainConfig, TrainReport};

use crate::bench_fanin::{FanInArgs, bench_fanin};
use crate::common::{Common, check_device};
use crate::cpu_time::summary;
use crate::median_interval::median_interval;
use crate::out::say;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    action: Option<BenchAction>,
    #[command(flatten)]
    common: Common,
    /// Steps per measured run.
    #[arg(long, default_value_t = 300)]
    steps: usize,
    /// Measured pairs of runs (bare and observed, the order alternating from pair to pair),
    /// after one warm-up run.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Observe with the instruments chosen by the options below (rate always) instead of one
    /// subscriber that reads every loss.
    #[arg(long)]
    instrumented: bool,
    /// Measure CPU time per step (training thread and whole process) for bare runs and for
    /// each instrument set, interleaved: a table that shows overheads wall time cannot.
    #[arg(long, conflicts_with = "instrumented")]
    cpu_time: bool,
    /// With `--cpu-time`: compare burn-train's `Learner` (the mlp, whole epochs) observed by
    /// burn-train's defaults (its file logger and CLI renderer) and by giving's logger and
    /// renderer, bare and with the rate and the log.
    #[arg(long, requires = "cpu_time")]
    learner: bool,
    #[command(flatten)]
    instruments: InstrumentArgs,
}

/// Benchmarks other than a model's training.
#[derive(Debug, Subcommand)]
enum BenchAction {
    /// Fan-in at scale: N simulated ranks publish through NATS into one watcher; reports its
    /// events/s, CPU per event, latency percentiles and every event's fate (docs/remote.md).
    Fanin(FanInArgs),
}

impl BenchArgs {
    /// The rules of the bench's own settings (the training's are [`TrainConfig::validate`]'s;
    /// `--steps` is the training's `steps`); a refusal names the setting and its value.
    fn validate(&self) -> Result<()> {
        if self.repeats == 0 {
            bail!("invalid setting: repeats must be at least 1, not 0");
        }
        Ok(())
    }
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

/// A run's throughput after its first sync window (what a long run settles at), or over the
/// whole run where that window was not timed apart.
fn steady_rate(report: &TrainReport) -> f64 {
    report
        .steady_items_per_second()
        .unwrap_or_else(|| report.items_per_second())
}

/// The first window's throughput of a bare and an observed run, for a run's line.
fn first_window(bare: &TrainReport, observed: &TrainReport) -> String {
    match (&bare.first, &observed.first) {
        (Some(b), Some(s)) => format!(
            "; first {} steps {:.0} and {:.0}",
            b.steps,
            b.items_per_second(),
            s.items_per_second()
        ),
        _ => String::new(),
    }
}

pub(crate) fn bench(args: BenchArgs) -> Result<()> {
    if let Some(BenchAction::Fanin(fanin)) = args.action {
        return bench_fanin(fanin);
    }
    let common = &args.common;
    check_device(&common.device)?;
    let model = common.model()?;
    let mut config = common.config()?;
    config.steps = Some(args.steps);
    config.valid_size = 0;
    let per_epoch = (config.train_size / config.batch_size.max(1)).max(1);
    config.epochs = args.steps.div_ceil(per_epoch);
    // Bad settings are refused before the first run, naming the setting.
    config.validate()?;
    args.validate()?;
    if args.cpu_time {
        say!(
            "[{model}] CPU time on {}: {} steps of batch {} per run, {} round(s) of every instrument set after a warm-up",
            common.device,
            args.steps,
            config.batch_size,
            args.repeats
        );
        if args.learner {
            // The Learner runs whole epochs, and validates each: a few validation batches.
            config.steps = None;
            config.valid_size = config.batch_size;
            return crate::cpu_time::learner_table(&config, &common.device, args.repeats);
        }
        return crate::cpu_time::table(model, &config, &common.device, args.repeats);
    }
    say!(
        "[{model}] bench on {}: {} steps of batch {} per run, {} pair(s) of runs after a warm-up",
        common.device,
        args.steps,
        config.batch_size,
        args.repeats
    );
    for setting in crate::cpu_backend::describe() {
        say!("{setting}");
    }
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
    // `--watch N` watches the observed runs only: the bare ones are the loop alone.
    let bare_config = TrainConfig {
        watch: None,
        ..config.clone()
    };
    let warmup = bench_run(model, &bare_config, &common.device, Observer::Bare)?;
    say!(
        "warm-up: {:.0} {}/s",
        warmup.items_per_second(),
        model.item_name()
    );
    let (mut bare, mut subscribed, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut bare_first, mut observed_first) = (Vec::new(), Vec::new());
    for repeat in 0..args.repeats {
        // The order alternates, so that a drift of the machine over the call (a warming
        // cache, a neighbour starting) weighs on both sides alike rather than on the second.
        let (b, s) = if repeat % 2 == 0 {
            let b = bench_run(model, &bare_config, &common.device, Observer::Bare)?;
            (b, bench_run(model, &config, &common.device, observed())?)
        } else {
            let s = bench_run(model, &config, &common.device, observed())?;
            (
                bench_run(model, &bare_config, &common.device, Observer::Bare)?,
                s,
            )
        };
        let (b_rate, s_rate) = (steady_rate(&b), steady_rate(&s));
        say!(
            "run {}: bare {b_rate:.0} {items}/s, {observed_name} {s_rate:.0} {items}/s (ratio {:.3}){}",
            repeat + 1,
            s_rate / b_rate,
            first_window(&b, &s),
            items = model.item_name(),
        );
        bare.push(b_rate);
        subscribed.push(s_rate);
        ratios.push(s_rate / b_rate);
        if let (Some(b), Some(s)) = (b.first, s.first) {
            bare_first.push(b.items_per_second());
            observed_first.push(s.items_per_second());
        }
    }
    let median = |v: Vec<f64>| summary(v).0;
    let interval = match median_interval(&ratios, 0.95) {
        Some((lo, hi, coverage)) => {
            format!(", {:.1}% interval {lo:.3}–{hi:.3}", coverage * 100.0)
        }
        None => String::new(),
    };
    let (ratio, lowest, highest) = summary(ratios);
    say!(
        "[{model}] median: bare {:.0} {items}/s, {observed_name} {:.0} {items}/s, ratio (median of pairs) {ratio:.3}{interval} (pairs {lowest:.3}–{highest:.3}){steady}",
        median(bare),
        median(subscribed),
        items = model.item_name(),
        steady = if bare_first.is_empty() {
            ""
        } else {
            ", after the first sync window"
        },
    );
    if !bare_first.is_empty() {
        say!(
            "[{model}] the first sync window apart: bare {:.0} {items}/s, {observed_name} {:.0} {items}/s (medians)",
            median(bare_first),
            median(observed_first),
            items = model.item_name(),
        );
    }
    Ok(())
}
