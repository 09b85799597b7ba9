//! `giving bench --cpu-time`: what each instrument set costs, as CPU time per training step.
//!
//! Wall-clock throughput on a small machine spreads about ±10% from run to run, more than an
//! instrument costs, so the table adds what repeats better: the training thread's own CPU time
//! per step (what the loop pays to give) and the whole process's (what the instruments'
//! threads add), beside the steps' wall time per step, measured for bare and for each
//! instrument set, interleaved in one process so that drift affects them alike.

use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use cpu_time::{ProcessTime, ThreadTime};
use giving_instruments::timeline::TraceFormat;
use giving_instruments::{
    CpuMonitor, Dash, DashMode, GpuMonitor, Instrument, MsgpackLog, Overseer, Rate, TensorBoard,
    Trace, Web,
};
use giving_models::learner::{Observed, train_learner_observed};
use giving_models::{DeviceSpec, ModelKind, TrainConfig};
use giving_nats::{Identity, NatsPublisher};

use crate::out::say;

/// Builds an instrument set; the path is a scratch directory for logs.
type Build = fn(&std::path::Path) -> Result<Vec<Box<dyn Instrument>>>;

/// An instrument set under measurement.
struct Set {
    name: &'static str,
    build: Build,
}

fn sets() -> Vec<Set> {
    vec![
        Set {
            name: "bare",
            build: |_| Ok(Vec::new()),
        },
        Set {
            name: "rate",
            build: |_| Ok(vec![Box::new(Rate::new())]),
        },
        Set {
            name: "rate+log",
            build: |dir| {
                Ok(vec![
                    Box::new(Rate::new()),
                    Box::new(MsgpackLog::in_dir(dir)?),
                ])
            },
        },
        Set {
            name: "rate+log+monitors",
            build: |dir| {
                Ok(vec![
                    Box::new(Rate::new()),
                    Box::new(MsgpackLog::in_dir(dir)?),
                    Box::new(CpuMonitor::new().interval(Duration::from_secs(1))),
                    Box::new(GpuMonitor::new().interval(Duration::from_secs(1))),
                ])
            },
        },
        Set {
            name: "trace",
            build: |dir| Ok(vec![Box::new(Trace::in_dir(dir, TraceFormat::Perfetto)?)]),
        },
        Set {
            name: "rate+trace",
            build: |dir| {
                Ok(vec![
                    Box::new(Rate::new()),
                    Box::new(Trace::in_dir(dir, TraceFormat::Perfetto)?),
                ])
            },
        },
        Set {
            name: "rate+dash",
            build: |_| {
                // Plain mode with a period longer than the run: the drawing thread and the
                // state pipeline run, and nothing clutters the table.
                let dash = Dash::new()
                    .mode(DashMode::Plain)
                    .plain_every(Duration::from_secs(3600));
                Ok(vec![Box::new(Rate::new()), Box::new(dash)])
            },
        },
        Set {
            // A client reads the page's event stream all along, as a browser's tab does.
            name: "rate+web (client connected)",
            build: |_| {
                let web = Web::bind("127.0.0.1:0")?.banner(false);
                read_events(web.local_addr())?;
                Ok(vec![Box::new(Rate::new()), Box::new(web)])
            },
        },
        Set {
            name: "rate+tensorboard",
            build: |dir| {
                Ok(vec![
                    Box::new(Rate::new()),
                    Box::new(TensorBoard::in_dir(dir)?),
                ])
            },
        },
        Set {
            // Nothing listens on the discard port: the publisher's buffer fills and drops.
            name: "rate+nats (server down)",
            build: |_| {
                Ok(vec![
                    Box::new(Rate::new()),
                    Box::new(publisher("nats://127.0.0.1:9")?),
                ])
            },
        },
        Set {
            // A server at `GIVING_BENCH_NATS` (`nats://HOST:PORT`); without it, the same as down.
            name: "rate+nats (server up)",
            build: |_| {
                let url = std::env::var("GIVING_BENCH_NATS")
                    .unwrap_or_else(|_| "nats://127.0.0.1:9".to_owned());
                Ok(vec![Box::new(Rate::new()), Box::new(publisher(&url)?)])
            },
        },
    ]
}

/// Connects to the web dashboard at `address` and reads its event stream on a thread until
/// the server closes it (at the run's finish).
fn read_events(address: std::net::SocketAddr) -> Result<()> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address)?;
    write!(stream, "GET /events HTTP/1.1\r\nHost: {address}\r\n\r\n")?;
    std::thread::spawn(move || {
        let mut buffer = [0u8; 1 << 14];
        while stream.read(&mut buffer).is_ok_and(|n| n > 0) {}
    });
    Ok(())
}

/// A NATS publisher of run `bench` with a small buffer (so that a down server drops).
fn publisher(url: &str) -> Result<NatsPublisher> {
    let identity = Identity::new("bench")?;
    Ok(NatsPublisher::new(url, identity)
        .capacity(1024)
        .finish_within(Duration::from_millis(200)))
}

/// The cost per step of one run: CPU time (training thread, whole process) and wall time.
fn measure(
    model: ModelKind,
    config: &TrainConfig,
    device: &DeviceSpec,
    instruments: Vec<Box<dyn Instrument>>,
) -> Result<Measured> {
    measure_with(instruments, || giving_models::train(model, config, device))
}

/// CPU time per step of one run of `train`: (training thread, whole process), in microseconds.
fn measure_with(
    instruments: Vec<Box<dyn Instrument>>,
    train: impl FnOnce() -> Result<giving_models::TrainReport, giving_models::Error>,
) -> Result<Measured> {
    let process = ProcessTime::now();
    let run = Overseer::new()
        .with_all(instruments)
        .quiet(true)
        .ctrl_c(false)
        .run(|| {
            let thread = ThreadTime::now();
            let report = train();
            (report, thread.elapsed())
        });
    let process = process.elapsed();
    if let Some(problem) = run.problems.first() {
        bail!("instrument problem: {problem}");
    }
    let (report, thread) = run.output.map_err(|p| anyhow!("training panicked: {p}"))?;
    let report = report?;
    let steps = report.steps.max(1) as f64;
    let per_step = |d: Duration| d.as_secs_f64() * 1e6 / steps;
    Ok(Measured {
        thread: per_step(thread),
        process: per_step(process),
        wall: per_step(report.train_time),
    })
}

/// One run's cost per training step, in µs.
struct Measured {
    /// The training thread's CPU time.
    thread: f64,
    /// The whole process's CPU time.
    process: f64,
    /// The steps' wall time (the report's training time: data generation and validation
    /// apart).
    wall: f64,
}

/// Median, min and max (of at least one value).
pub(crate) fn summary(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

/// Runs every set `repeats` times, interleaved, after one warm-up run, and prints the table.
pub(crate) fn table(
    model: ModelKind,
    config: &TrainConfig,
    device: &DeviceSpec,
    repeats: usize,
) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("giving-bench-cpu-{}", std::process::id()));
    let sets = sets();
    measure(model, config, device, Vec::new())?; // warm-up
    let rounds = interleaved_rounds(sets.len(), repeats, |index| {
        measure(model, config, device, (sets[index].build)(&dir)?)
    })?;
    let _ = std::fs::remove_dir_all(&dir);
    let names: Vec<&str> = sets.iter().map(|set| set.name).collect();
    print_table("instruments", "vs bare", &names, &rounds);
    Ok(())
}

/// Measures every set `repeats` times (at least once), interleaved round by round so that drift
/// affects them alike: each set's training-thread and process CPU times per step.
fn interleaved_rounds(
    sets: usize,
    repeats: usize,
    mut measure_set: impl FnMut(usize) -> Result<Measured>,
) -> Result<Rounds> {
    let mut thread = vec![Vec::new(); sets];
    let mut process = vec![Vec::new(); sets];
    let mut wall = vec![Vec::new(); sets];
    for round in 0..repeats.max(1) {
        for index in 0..sets {
            let measured = measure_set(index)?;
            thread[index].push(measured.thread);
            process[index].push(measured.process);
            wall[index].push(measured.wall);
        }
        say!("round {}/{} done", round + 1, repeats.max(1));
    }
    Ok(Rounds {
        thread,
        process,
        wall,
    })
}

/// What [`interleaved_rounds`] measured: per set, one figure per step per round.
struct Rounds {
    /// The training thread's CPU time.
    thread: Vec<Vec<f64>>,
    /// The whole process's CPU time.
    process: Vec<Vec<f64>>,
    /// The steps' wall time.
    wall: Vec<Vec<f64>>,
}

/// Prints the rounds as a markdown table: per set, the median (min–max) CPU µs per step of the
/// training thread and of the process, and the steps' wall µs per step, each against the
/// first set's median.
fn print_table(first_column: &str, against: &str, names: &[&str], rounds: &Rounds) {
    let Rounds {
        thread,
        process,
        wall,
    } = rounds;
    say!(
        "\n| {first_column} | training thread CPU µs/step: median (min–max) | {against} | process CPU µs/step: median (min–max) | {against} | wall µs/step: median (min–max) | {against} |"
    );
    say!("|---|---|---|---|---|---|---|");
    let base = |figures: &[Vec<f64>]| summary(figures[0].clone()).0;
    let (base_thread, base_process, base_wall) = (base(thread), base(process), base(wall));
    for (index, name) in names.iter().enumerate() {
        let (t, t_min, t_max) = summary(thread[index].clone());
        let (p, p_min, p_max) = summary(process[index].clone());
        let (w, w_min, w_max) = summary(wall[index].clone());
        say!(
            "| {name} | {t:.1} ({t_min:.1}–{t_max:.1}) | {:+.1}% | {p:.1} ({p_min:.1}–{p_max:.1}) | {:+.1}% | {w:.1} ({w_min:.1}–{w_max:.1}) | {:+.1}% |",
            100.0 * (t / base_thread - 1.0),
            100.0 * (p / base_process - 1.0),
            100.0 * (w / base_wall - 1.0),
        );
    }
}

/// A Learner set under measurement: who observes it, and the instruments beside.
struct LearnerSet {
    name: &'static str,
    observed: Observed,
    build: Build,
}

fn learner_sets() -> Vec<LearnerSet> {
    vec![
        LearnerSet {
            name: "burn-train default (file logger, CLI renderer)",
            observed: Observed::BurnDefault,
            build: |_| Ok(Vec::new()),
        },
        LearnerSet {
            name: "giving logger + renderer",
            observed: Observed::Giving,
            build: |_| Ok(Vec::new()),
        },
        LearnerSet {
            name: "giving logger + renderer, rate+log",
            observed: Observed::Giving,
            build: |dir| {
                Ok(vec![
                    Box::new(Rate::new()),
                    Box::new(MsgpackLog::in_dir(dir)?),
                ])
            },
        },
    ]
}

/// `--cpu-time --learner`: the Learner observed by burn-train's defaults and by giving, every
/// set `repeats` times interleaved after a warm-up; the table compares each with burn-train's
/// default (the training thread is the one that calls `launch`; burn-train's loggers and
/// renderer run on threads of its own, counted in the process column).
pub(crate) fn learner_table(
    config: &TrainConfig,
    device: &DeviceSpec,
    repeats: usize,
) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("giving-bench-learner-{}", std::process::id()));
    let sets = learner_sets();
    let run = |observed, instruments| {
        measure_with(instruments, || {
            train_learner_observed(config, device, observed)
        })
    };
    run(Observed::Giving, Vec::new())?; // warm-up
    let rounds = interleaved_rounds(sets.len(), repeats, |index| {
        run(sets[index].observed, (sets[index].build)(&dir)?)
    })?;
    let _ = std::fs::remove_dir_all(&dir);
    let names: Vec<&str> = sets.iter().map(|set| set.name).collect();
    print_table(
        "Learner observed by",
        "vs burn-train default",
        &names,
        &rounds,
    );
    Ok(())
}
