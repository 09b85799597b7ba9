//! `giving tune`: PredTuner-style tuning of the bundled VGG's convolutions under the Overseer
//! (so `--dash`, `--log` and `--trace` work as for training), `giving tune --list-knobs`, and
//! `giving tune apply CONFIGS` to run one configuration found again.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use giving::Event;
use giving::prelude::*;
use giving::vocab::keys;
use giving_instruments::{InstrumentArgs, Overseer};
use giving_models::DeviceSpec;
use giving_tuner::{
    ApplyJob, Knob, TuneJob, TuneOutcome, TuneSettings, configs_file, default_cache_dir,
    default_training, default_vgg, vgg16_width, vgg16_width_training,
};

use crate::common::check_device;
use crate::exit::exit_code;
use crate::out::say;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct TuneArgs {
    #[command(subcommand)]
    action: Option<TuneAction>,
    /// The network to tune: the bundled VGG on 32×32 shapes (six 32-channel convolutions), or
    /// `vgg16-width` (eight convolutions of 64 to 512 channels; slow on the CPU).
    #[arg(default_value = "vgg", value_parser = ["vgg", "vgg16-width"])]
    model: String,
    /// List the knobs (id, cost factor, what it does) and exit.
    #[arg(long)]
    list_knobs: bool,
    /// Device: flex (CPU), wgpu, wgpu:N, cuda or cuda:N (among the backends compiled in).
    #[arg(long, value_parser = parse_device, default_value_t = DeviceSpec::default())]
    device: DeviceSpec,
    /// The session's settings (`--max-iter` … `--repeats`), declared on [`TuneSettings`].
    #[command(flatten)]
    settings: TuneSettings,
    /// Seed of the data and of the network's training.
    // Shown between the session's `--seed` and `--population`, where it always was: clap
    // numbers the flags in declaration order (the subcommand, then `--list-knobs` = 1, …,
    // `--seed` = 11, `--population` = 12) and sorts ties by name (`data-seed` < `population`).
    #[arg(long, default_value_t = 0, display_order = 12)]
    data_seed: u64,
    /// Folder of configs.json and configs.png.
    #[arg(long, default_value = "tune-out")]
    out: PathBuf,
    /// Cache of trained weights [default: $XDG_CACHE_HOME/giving or ~/.cache/giving].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Train the network again even if weights are cached.
    #[arg(long)]
    retrain: bool,
    /// Channels of the convolutions, comma-separated (an even count) [default: 32,32,32,32,32,32].
    #[arg(long, value_delimiter = ',')]
    channels: Vec<usize>,
    /// Width of the hidden linear layer.
    #[arg(long)]
    hidden: Option<usize>,
    /// Training epochs when no weights are cached [default: 3 for `vgg`, 4 for `vgg16-width`].
    #[arg(long)]
    epochs: Option<usize>,
    /// Adam's learning rate when no weights are cached [default: 2e-3 for `vgg`, 1e-4 for
    /// `vgg16-width`].
    #[arg(long)]
    lr: Option<f64>,
    /// Training images when no weights are cached.
    #[arg(long)]
    train_size: Option<usize>,
    /// Images of the tuning set.
    #[arg(long, default_value_t = default_job().tune_size)]
    tune_size: usize,
    /// Images of the test set.
    #[arg(long, default_value_t = default_job().test_size)]
    test_size: usize,
    /// Print a progress line every N iterations (0: only the summary).
    #[arg(long, default_value_t = 100)]
    every: u64,
    /// Instruments: rate (always), log, early stop, monitors, dashboard, trace.
    #[command(flatten)]
    instruments: InstrumentArgs,
}

#[derive(Debug, Subcommand)]
enum TuneAction {
    /// Run one configuration of a configs.json on the tuning and test sets and check that it
    /// reproduces its recorded QoS.
    Apply(ApplyArgs),
}

#[derive(Debug, Args)]
struct ApplyArgs {
    /// configs.json (or the folder holding it).
    configs: PathBuf,
    /// Index of the configuration in the file.
    #[arg(long, default_value_t = 0)]
    index: usize,
    /// Device: flex (CPU), wgpu, wgpu:N, cuda or cuda:N.
    #[arg(long, value_parser = parse_device, default_value_t = DeviceSpec::default())]
    device: DeviceSpec,
}

/// The tuner's default job: the defaults of the flags that set a job's fields are read from it,
/// not written again here.
fn default_job() -> TuneJob {
    TuneJob::new(PathBuf::new(), PathBuf::new())
}

fn parse_device(s: &str) -> Result<DeviceSpec, String> {
    s.parse().map_err(|e: giving_models::Error| e.to_string())
}

pub(crate) fn tune(args: TuneArgs) -> Result<ExitCode> {
    if let Some(TuneAction::Apply(apply_args)) = args.action {
        return apply(apply_args).map(|()| ExitCode::SUCCESS);
    }
    if args.list_knobs {
        let knobs = Knob::all();
        // The widest id sets the column (the FP16 knobs' ids are the longest).
        let width = knobs.iter().map(|k| k.id().len()).max().unwrap_or(4);
        say!("{:<width$} {:>6}  what", "knob", "cost");
        for knob in knobs {
            say!(
                "{:<width$} {:>6.3}  {}{}",
                knob.id(),
                knob.cost_factor(),
                knob.describe(),
                knob.opt_in_reason()
                    .map(|why| format!(" ({why})"))
                    .unwrap_or_default()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    check_device(&args.device)?;
    let job = job(&args)?;
    job.validate()?;
    let instruments = args.instruments.instruments()?;
    let weights = job.weights_path();
    say!(
        "[tune] weights cache: {} ({})",
        job.cache.display(),
        if weights.is_file() && !job.retrain {
            "cached, reused"
        } else {
            "not cached: training the network first"
        }
    );
    let s = &job.settings;
    say!(
        "[tune] vgg {:?} on {}: {} iterations, keep {}{}, tune {}{}, best {}, qos model {:?}, seed {}",
        job.model.channels,
        args.device,
        s.max_iter,
        s.qos_keep_threshold,
        if s.relative { " loss" } else { " qos" },
        s.qos_tuner_threshold,
        if s.relative { " loss" } else { " qos" },
        s.take_best_n,
        s.qos_model,
        s.seed,
    );

    let every = args.every;
    let mut overseer = Overseer::new().with_all(instruments);
    if !args.instruments.dash.dash {
        overseer = overseer.instrument_fn("progress", move |start| {
            let lines = start
                .given()
                .stream()
                .paced(giving_instruments::SINK_PACE)
                .where_any([keys::ITERATION, keys::ACCURACY])
                .filter_map(move |event| progress_line(every, &event))
                .for_each(|line| say!("{line}"));
            start.spawn(lines);
            Ok(())
        });
    }
    let device = args.device;
    let run = overseer.run(move || device.run(job));
    let code = run.exit_code();
    let outcome = run
        .output
        .map_err(|panic| anyhow!("tuning panicked: {panic}"))???;
    summary(&outcome);
    Ok(exit_code(code))
}

fn job(args: &TuneArgs) -> Result<TuneJob> {
    let cache = args.cache.clone().unwrap_or_else(default_cache_dir);
    let mut job = TuneJob::new(cache, args.out.clone());
    job.model = match args.model.as_str() {
        "vgg16-width" => vgg16_width(),
        _ => default_vgg(),
    };
    if !args.channels.is_empty() {
        job.model.channels = args.channels.clone();
    }
    if let Some(hidden) = args.hidden {
        job.model.hidden = hidden;
    }
    job.train = match args.model.as_str() {
        "vgg16-width" => vgg16_width_training(),
        _ => default_training(),
    };
    job.train.seed = args.data_seed;
    if let Some(lr) = args.lr {
        job.train.lr = lr;
    }
    if let Some(epochs) = args.epochs {
        job.train.epochs = epochs;
    }
    if let Some(n) = args.train_size {
        job.train.train_size = n;
    }
    job.train.valid_size = args.tune_size;
    job.tune_size = args.tune_size;
    job.test_size = args.test_size;
    job.retrain = args.retrain;
    job.settings = args.settings.clone();
    // No `--knobs`: HPVM's f16 knobs join the FP32 ones where f16 arithmetic is native.
    if job.settings.knobs.is_empty() {
        job.settings.knobs = TuneSettings::default_knobs(!matches!(args.device, DeviceSpec::Flex));
    }
    Ok(job)
}

/// A line per `every` iterations, and one per training epoch's validation.
fn progress_line(every: u64, event: &Event) -> Option<String> {
    if event.has(keys::ACCURACY) {
        let epoch = event.get_as::<u64>(keys::EPOCH).ok()?;
        let accuracy = event.get_as::<f64>(keys::ACCURACY).ok()?;
        return Some(format!(
            "[tune] training epoch {epoch}: accuracy {:.2}%",
            100.0 * accuracy
        ));
    }
    let iteration = event.get_as::<u64>(keys::ITERATION).ok()?;
    if every == 0 || (iteration + 1) % every != 0 {
        return None;
    }
    let qos = event.get_as::<f64>(keys::QOS).ok()?;
    let loss = event.get_as::<f64>(keys::QOS_LOSS).ok()?;
    let speedup = event.get_as::<f64>(keys::SPEEDUP).ok()?;
    let kept = event.get_as::<u64>(keys::KEPT).ok()?;
    let best = event.get_as::<f64>(keys::BEST).ok()?;
    Some(format!(
        "[tune] iteration {:>5}  qos {qos:6.2} (loss {loss:5.2})  speedup {speedup:4.2}x  kept {kept:>4}  best {best:4.2}x",
        iteration + 1
    ))
}

fn summary(outcome: &TuneOutcome) {
    let file = &outcome.file;
    if let Some(report) = &outcome.trained {
        say!(
            "[tune] trained the network: accuracy {:.2}% after {} steps ({:.1}s); weights saved to {}",
            100.0 * report.accuracy.unwrap_or(0.0),
            report.steps,
            report.train_time.as_secs_f64(),
            outcome.weights.display()
        );
    }
    let t = &file.timing;
    let pareto = file.configs.iter().filter(|c| c.pareto).count();
    let best = file.configs.iter().filter(|c| c.best).count();
    say!(
        "[tune] baseline qos {:.2}% (test {:.2}%); {} iterations in {:.1}s (init {:.1}s, search {:.1}s, validation {:.1}s); measurement {:.1}s",
        file.baseline.qos,
        file.baseline.test_qos,
        t.iterations,
        t.tuning,
        t.init,
        t.search,
        t.validation,
        t.measurement
    );
    if let Some(profile) = &file.profile {
        let path = profile
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if profile.loaded {
            say!(
                "[tune] qos model profile loaded from {path} ({} (layer, knob) pairs run)",
                profile.built
            );
        } else {
            say!(
                "[tune] qos model profile built ({} (layer, knob) pairs run), stored in {path}",
                profile.built
            );
        }
    }
    say!(
        "[tune] kept {} configurations, {pareto} on the Pareto front, {best} best; dropped {} by validation and {} by the test-set threshold",
        file.configs.len(),
        file.dropped.validation,
        file.dropped.test
    );
    // The best are timed over --repeats interleaved rounds, the other kept configurations
    // over one: the fastest is taken among the best, whose timings are the steadier.
    if let Some(top) = file
        .configs
        .iter()
        .filter(|c| c.best && c.measured_speedup.is_some())
        .max_by(|a, b| {
            a.measured_speedup
                .unwrap_or(0.0)
                .total_cmp(&b.measured_speedup.unwrap_or(0.0))
        })
    {
        // The test loss beside the tuning loss: a configuration chosen on the tuning set is
        // only as good as the gap between the two says.
        let test_loss = file.baseline.test_qos - top.test_qos.unwrap_or(f64::NAN);
        say!(
            "[tune] fastest measured among the best: {:.2}x (predicted {:.2}x), qos {:.2}% (loss {:.2}), test qos {:.2}% (loss {:.2}, {:+.2} points from the tuning set's): {}",
            top.measured_speedup.unwrap_or(0.0),
            top.predicted_speedup,
            top.qos,
            top.qos_loss,
            top.test_qos.unwrap_or(f64::NAN),
            test_loss,
            test_loss - top.qos_loss,
            top.knobs.join(",")
        );
    }
    // How well the cost model predicted what was measured, over the best (timed over
    // --repeats rounds): the figure that says whether to trust its ranking.
    let mut errors: Vec<f64> = file
        .configs
        .iter()
        .filter(|c| c.best)
        .filter_map(|c| {
            let m = c.measured_speedup?;
            Some((c.predicted_speedup - m).abs() / m)
        })
        .collect();
    if !errors.is_empty() {
        errors.sort_by(f64::total_cmp);
        say!(
            "[tune] cost model ({}): median |predicted - measured| / measured speedup of the best {:.1}%",
            // The name the flag takes (`--cost-model measured`).
            file.settings
                .cost_model
                .to_possible_value()
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default(),
            100.0 * errors[errors.len() / 2]
        );
    }
    say!(
        "[tune] wrote {} and {}",
        outcome.configs_path.display(),
        outcome.plot_path.display()
    );
}

fn apply(args: ApplyArgs) -> Result<()> {
    check_device(&args.device)?;
    let job = ApplyJob {
        path: configs_file(&args.configs),
        index: args.index,
    };
    // Check the file before the network is built.
    job.load()?;
    let outcome = args.device.run(job)??;
    let record = &outcome.record;
    say!(
        "[apply] configuration {}: {}",
        args.index,
        record.knobs.join(",")
    );
    say!(
        "[apply] tuning qos {:.2}% (recorded {:.2}%)",
        outcome.qos,
        record.qos
    );
    say!(
        "[apply] test qos {:.2}%{}",
        outcome.test_qos,
        record
            .test_qos
            .map(|q| format!(" (recorded {q:.2}%)"))
            .unwrap_or_default()
    );
    // Timings vary from run to run (the session's were taken under its own load): reported
    // beside the recorded one, not required to match.
    say!(
        "[apply] measured speedup {:.2}x{}",
        outcome.speedup,
        record
            .measured_speedup
            .map(|s| format!(
                " (recorded {s:.2}x, predicted {:.2}x)",
                record.predicted_speedup
            ))
            .unwrap_or_default()
    );
    let same = outcome.qos == record.qos && record.test_qos.is_none_or(|q| q == outcome.test_qos);
    if !same {
        bail!(
            "the configuration's QoS differs from the one recorded in {}",
            args.configs.display()
        );
    }
    say!("[apply] reproduces the recorded QoS exactly");
    Ok(())
}
