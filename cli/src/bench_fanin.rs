//! `giving bench fanin`: N simulated ranks publish through a NATS server into one watcher
//! (`giving_nats::bench`); prints the table of docs/remote.md, "Fan-in at scale".

use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use giving_nats::bench::{BenchError, DEFAULT_TICK, FanInBench, FanInReport, NatsServer};

use crate::out::say;

#[derive(Debug, Args)]
pub(crate) struct FanInArgs {
    /// Simulated rank counts, one measurement each (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [1u64, 8, 64], value_parser = clap::value_parser!(u64).range(1..))]
    ranks: Vec<u64>,
    /// Events per second each rank gives.
    #[arg(long, default_value_t = 1000.0, value_parser = parse_positive)]
    rate: f64,
    /// Seconds each measurement gives for.
    #[arg(long, default_value_t = 10.0, value_parser = parse_positive)]
    seconds: f64,
    /// Each rank wakes this often (milliseconds) and gives the events due; 0 wakes it once per
    /// event, which with many ranks measures the ranks' own scheduling more than the watcher.
    #[arg(long, default_value_t = DEFAULT_TICK.as_secs_f64() * 1e3, value_parser = parse_non_negative)]
    tick_ms: f64,
    /// Niceness of the ranks' threads (0–19).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=19))]
    nice: i32,
    /// Run every measurement with a busy thread per core (a machine with other work on it).
    #[arg(long, conflicts_with = "quiet_and_hog")]
    hog: bool,
    /// Run every rank count twice: quiet, then with the busy threads.
    #[arg(long)]
    quiet_and_hog: bool,
    /// The NATS server to measure through (`nats://HOST:PORT`) [default: a `nats-server`
    /// started on a free loopback port for the bench].
    #[arg(long)]
    server: Option<String>,
}

fn parse_positive(s: &str) -> Result<f64, String> {
    s.parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("{s:?} is not a positive number"))
}

fn parse_non_negative(s: &str) -> Result<f64, String> {
    s.parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("{s:?} is not a number ≥ 0"))
}

/// Runs every measurement asked for and prints the table; fails if an account does not
/// balance (an event neither received nor counted as rejected, dropped or lost).
pub(crate) fn bench_fanin(args: FanInArgs) -> Result<()> {
    // Kept alive until the end: dropping it kills the server.
    let mut started = None;
    let url = match &args.server {
        Some(url) => url.clone(),
        None => match NatsServer::start() {
            Ok(server) => started.insert(server).url(),
            Err(BenchError::ServerMissing) => bail!(
                "nats-server is not installed (on PATH); install it or name a server with --server"
            ),
            Err(error) => return Err(error).context("starting nats-server"),
        },
    };
    let tick = Duration::from_secs_f64(args.tick_ms / 1e3);
    let hogs: &[bool] = match (args.hog, args.quiet_and_hog) {
        (_, true) => &[false, true],
        (true, false) => &[true],
        (false, false) => &[false],
    };
    say!(
        "fan-in through {url}: {} s per measurement, ranks woken every {tick:?} at niceness {}",
        args.seconds,
        args.nice
    );
    say!("{}", FanInReport::TABLE_HEADER);
    let mut unbalanced = Vec::new();
    for &hog in hogs {
        for &ranks in &args.ranks {
            let report = FanInBench::new(ranks)
                .rate(args.rate)
                .seconds(args.seconds)
                .hog(hog)
                .tick(tick)
                .nice(args.nice)
                .measure(&url)
                .with_context(|| format!("{ranks} ranks"))?;
            say!("{}", report.table_row());
            if !report.balances() {
                unbalanced.push(format!("{report:?}"));
            }
        }
    }
    if !unbalanced.is_empty() {
        bail!(
            "events unaccounted for or out of order (sent ≠ received + rejected + dropped + lost, or misordered > 0): {}",
            unbalanced.join("; ")
        );
    }
    Ok(())
}
