//! Fan-in at scale: N simulated ranks publish to a local `nats-server` (started here) into one
//! watcher; prints a Markdown table (docs/remote.md, "Fan-in at scale").
//!
//! ```text
//! cargo run --release -p giving-nats --example fanin_bench -- [--ranks 1,8,64] [--rate 1000]
//!     [--seconds 10] [--tick-ms 10] [--nice 0] [--hog | --quiet-and-hog]
//! ```
//!
//! `--tick-ms`: each rank wakes that often and gives the events due (0: one wake-up per
//! event); `--nice`: the ranks' threads' niceness; `--hog`: one busy thread per core meanwhile
//! (`--quiet-and-hog`: each rank count without, then with).

use std::process::ExitCode;
use std::time::Duration;

use giving_nats::bench::{BenchError, DEFAULT_TICK, FanInBench, FanInReport, NatsServer};

/// The command line's settings.
struct Settings {
    ranks: Vec<u64>,
    rate: f64,
    seconds: f64,
    tick: Duration,
    nice: i32,
    /// The CPU-hog settings to run each rank count with.
    hogs: Vec<bool>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Settings, String> {
    let mut settings = Settings {
        ranks: vec![1, 8, 64],
        rate: 1000.0,
        seconds: 10.0,
        tick: DEFAULT_TICK,
        nice: 0,
        hogs: vec![false],
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--ranks" => {
                settings.ranks = value("--ranks")?
                    .split(',')
                    .map(|n| {
                        n.trim()
                            .parse()
                            .map_err(|_| format!("--ranks: {n:?} is not a count"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--rate" => {
                let rate = value("--rate")?;
                settings.rate = rate
                    .parse()
                    .ok()
                    .filter(|r: &f64| r.is_finite() && *r > 0.0)
                    .ok_or(format!("--rate: {rate:?} is not a positive number"))?;
            }
            "--seconds" => {
                let seconds = value("--seconds")?;
                settings.seconds = seconds
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or(format!("--seconds: {seconds:?} is not a positive number"))?;
            }
            "--tick-ms" => {
                let tick = value("--tick-ms")?;
                settings.tick = tick
                    .parse()
                    .ok()
                    .filter(|t: &f64| t.is_finite() && *t >= 0.0)
                    .map(|t| Duration::from_secs_f64(t / 1e3))
                    .ok_or(format!(
                        "--tick-ms: {tick:?} is not a number of milliseconds"
                    ))?;
            }
            "--nice" => {
                let nice = value("--nice")?;
                settings.nice = nice
                    .parse()
                    .ok()
                    .filter(|n| (0..=19).contains(n))
                    .ok_or(format!("--nice: {nice:?} is not a niceness from 0 to 19"))?;
            }
            "--hog" => settings.hogs = vec![true],
            "--quiet-and-hog" => settings.hogs = vec![false, true],
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(settings)
}

fn main() -> ExitCode {
    let settings = match parse(std::env::args().skip(1)) {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("fanin_bench: {message}");
            return ExitCode::from(2);
        }
    };
    let server = match NatsServer::start() {
        Ok(server) => server,
        Err(BenchError::ServerMissing) => {
            eprintln!("fanin_bench: SKIPPED: nats-server is not installed");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("fanin_bench: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{} s per measurement, ranks woken every {:?} at niceness {}",
        settings.seconds, settings.tick, settings.nice
    );
    println!("{}", FanInReport::TABLE_HEADER);
    for &hog in &settings.hogs {
        for &ranks in &settings.ranks {
            let bench = FanInBench::new(ranks)
                .rate(settings.rate)
                .seconds(settings.seconds)
                .hog(hog)
                .tick(settings.tick)
                .nice(settings.nice);
            match bench.measure(&server.url()) {
                Ok(report) => {
                    println!("{}", report.table_row());
                    // What the table leaves out: published, gaps, misordered.
                    eprintln!("{report:?}");
                }
                Err(error) => {
                    eprintln!("fanin_bench: {ranks} ranks: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
