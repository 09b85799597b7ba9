//! `giving watch nats://HOST:PORT --run NAME`: every rank of a run, fanned in from NATS, into
//! the instruments a local run would have (`--log`, `--trace`, `--dash`, `--web`).

use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use giving::prelude::*;
use giving::vocab::keys::{NATS_DROPPED, NATS_LOST, NATS_REJECTED, RANK_END};
use giving::vocab::{RateEvent, keys};
use giving::{Event, Giver, StopToken};
use giving_instruments::{
    DashArgs, InstrumentArgs, LogArgs, MlflowArgs, Overseer, TensorBoardArgs, TraceArgs, WebArgs,
};
use giving_nats::{FanIn, Until, run_subjects};

use crate::exit::exit_code;
use crate::nats_auth::NatsAuthArgs;
use crate::out::say;

#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// The NATS server: `nats://HOST:PORT`, `tls://HOST:PORT`, `nats://USER:PASSWORD@HOST:PORT`
    /// (see the `--nats-*` options).
    #[arg(value_name = "URL")]
    url: String,
    #[command(flatten)]
    auth: NatsAuthArgs,
    /// Accept only ranks below N: records from other ranks are rejected and counted
    /// (`nats_rejected`), as are records whose rank is not the one their subject names.
    /// Without it, a rank is checked against the world size its own events announce.
    #[arg(long, value_name = "N")]
    world_size: Option<u64>,
    /// The run to watch: its ranks publish on `giving.<run>.<rank>`.
    #[arg(long, value_name = "NAME")]
    run: String,
    /// End when every rank heard from has ended (and at least as many as their
    /// `world_size`); without it, watch until Ctrl-C.
    #[arg(long)]
    until_done: bool,
    /// Replay the run from its first event, as its JetStream stream kept it (the ranks
    /// published with `--publish-store`), then go on live: for a watcher that joins late.
    #[arg(long)]
    replay: bool,
    /// End when nothing arrived for SECS seconds.
    #[arg(long, value_name = "SECS")]
    idle: Option<f64>,
    #[command(flatten)]
    log: LogArgs,
    #[command(flatten)]
    dash: DashArgs,
    #[command(flatten)]
    trace: TraceArgs,
    #[command(flatten)]
    tensorboard: TensorBoardArgs,
    #[command(flatten)]
    mlflow: MlflowArgs,
    /// `--web [ADDR]`: every rank in a browser, overlaid on each chart.
    #[command(flatten)]
    web: WebArgs,
}

pub(crate) fn watch(args: WatchArgs) -> Result<ExitCode> {
    let subject = run_subjects(&args.run).context("--run")?;
    // `try_from_secs_f64`: a finite number can still be too large for a Duration (1e300).
    let idle = match args.idle {
        Some(secs) => match Duration::try_from_secs_f64(secs) {
            Ok(idle) if secs > 0.0 => Some(idle),
            // `{:?}` writes a huge number as `1e300`, not its 301 digits.
            _ => bail!("--idle must be a positive number of seconds, not {secs:?} (at most 10^19)"),
        },
        None => None,
    };
    let options = InstrumentArgs {
        log: args.log.clone(),
        dash: args.dash.clone(),
        trace: args.trace.clone(),
        tensorboard: args.tensorboard.clone(),
        mlflow: args.mlflow.clone(),
        web: args.web.clone(),
        ..InstrumentArgs::default()
    };
    // The ranks measured their own rates: no rate over the merged steps.
    let instruments = options
        .instruments()?
        .into_iter()
        .filter(|instrument| instrument.name() != "rate");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the watcher's runtime")?;
    let auth = args.auth.auth();
    let mut fan_in = if args.replay {
        runtime.block_on(FanIn::replay_with(&args.url, &args.run, &auth))?
    } else {
        runtime.block_on(FanIn::connect_with(&args.url, &args.run, &auth))?
    };
    if let Some(world_size) = args.world_size {
        fan_in = fan_in.world_size(world_size);
    }

    let stop: Arc<Mutex<Option<StopToken>>> = Arc::default();
    let stop_slot = stop.clone();
    let mut overseer = Overseer::new()
        .with_all(instruments)
        .instrument_fn("watch", move |start| {
            *stop_slot.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(start.given().stop_token());
            Ok(())
        });
    if !args.dash.dash {
        overseer = overseer.instrument_fn("lines", |start| {
            let lines = start
                .given()
                .stream()
                .paced(giving_instruments::SINK_PACE)
                .where_any([keys::RATE, RANK_END, NATS_DROPPED, NATS_REJECTED, NATS_LOST])
                .filter_map(|event| line(&event))
                .for_each(|line| say!("{line}"));
            start.spawn(lines);
            Ok(())
        });
    }
    let run = overseer.run(|| {
        let giver = Giver::current();
        // Said once Ctrl-C is handled: from here on it ends the watch cleanly.
        eprintln!("giving watch: subscribed to {subject} on {}", fan_in.url());
        // The instruments have started: the scope's stop token (Ctrl-C) is in the slot.
        let until = Until {
            done: args.until_done,
            idle,
            stop: stop.lock().unwrap_or_else(PoisonError::into_inner).clone(),
        };
        let given = runtime.block_on(fan_in.forward(&giver, &until));
        (given, fan_in.ranks().clone())
    });
    let code = run.exit_code();
    let (given, ranks) = run
        .output
        .map_err(|panic| anyhow::anyhow!("watch panicked: {panic}"))?;
    eprintln!(
        "giving watch: {given} events from rank(s) {:?}; ended: {:?}",
        ranks.seen(),
        ranks.ended_ranks()
    );
    Ok(exit_code(code))
}

/// A line for a rate, a rank's end, a drop report, or the fan-in's rejections and losses.
fn line(event: &Event) -> Option<String> {
    if let Ok(lost) = event.get_as::<u64>(NATS_LOST) {
        return Some(format!(
            "[watch] at least {lost} message(s) lost: the watcher fell behind its NATS client's queue"
        ));
    }
    if let Ok(rejected) = event.get_as::<u64>(NATS_REJECTED) {
        return Some(format!(
            "[watch] {rejected} record(s) rejected (not a record, or not from a rank of this run)"
        ));
    }
    let rank = event
        .get_as::<u64>(keys::RANK)
        .map_or_else(|_| "?".to_owned(), |r| r.to_string());
    if let Ok(events) = event.get_as::<u64>(RANK_END) {
        let dropped = event.get_as::<u64>(NATS_DROPPED).unwrap_or(0);
        return Some(format!(
            "[rank {rank}] ended: {events} events ({dropped} dropped)"
        ));
    }
    if let Some(rate) = RateEvent::of(event) {
        return Some(format!(
            "[rank {rank}] {} {:.0} {}",
            rate.task, rate.rate, rate.units
        ));
    }
    let dropped = event.get_as::<u64>(NATS_DROPPED).ok()?;
    Some(format!(
        "[rank {rank}] {dropped} event(s) dropped by its publisher"
    ))
}
