//! `giving log …`: the log format's own subcommands (`dump`, `stats`, from giving-log) and
//! `serve`, which replays finished logs into the web dashboard.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use giving::vocab::keys;
use giving::{Giver, Value};
use giving_instruments::log::{LogError, LogReader};
use giving_instruments::{Overseer, Web};
use giving_log::LogCommand;

/// `giving log …`.
#[derive(Debug, Subcommand)]
pub(crate) enum LogCli {
    #[command(flatten)]
    Read(LogCommand),
    /// Replay finished logs in the web dashboard (the page `--web` serves), until Ctrl-C: each
    /// file's events are one line on each chart when several are given.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The log files (`train --log DIR` writes them).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Where to serve the page.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    web: String,
    /// Let `--web` listen on an address other machines reach.
    #[arg(long)]
    web_public: bool,
}

impl LogCli {
    /// Runs the subcommand; see `LogCommand::run` for the exit codes of `dump` and `stats`.
    pub(crate) fn run(self) -> Result<ExitCode> {
        match self {
            LogCli::Read(command) => command
                .run()
                .map(|health| ExitCode::from(health.exit_code()))
                .map_err(anyhow::Error::from),
            LogCli::Serve(args) => serve(args),
        }
    }
}

fn serve(args: ServeArgs) -> Result<ExitCode> {
    // Every file opens before anything is served: a wrong path is an error, not an empty page.
    let readers = args
        .files
        .iter()
        .map(|file| LogReader::open(file).with_context(|| format!("{}", file.display())))
        .collect::<Result<Vec<_>>>()?;
    let web = if args.web_public {
        Web::bind_public(args.web.as_str())
    } else {
        Web::bind(args.web.as_str())
    }?;
    let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    let mut web = web
        .title(format!("giving log serve {}", names.join(" ")))
        .linger(Duration::MAX);
    // The page shows when the runs began (the earliest log's start), not when they are replayed.
    if let Some(first) = readers
        .iter()
        .map(|reader| reader.header().start_time)
        .min()
    {
        web = web.started(first);
    }
    let several = readers.len() > 1;
    let run = Overseer::new().with(web).run(move || {
        let giver = Giver::current();
        for (reader, name) in readers.into_iter().zip(&names) {
            replay(reader, name, several, &giver);
        }
    });
    Ok(ExitCode::from(u8::try_from(run.exit_code()).unwrap_or(1)))
}

/// Gives every event of `reader` (labelled with the file's `name` as its `bench` when several
/// files are overlaid and the event names no source); damage is reported and skipped.
fn replay(reader: LogReader, name: &str, several: bool, giver: &Giver) {
    let mut events = 0u64;
    for item in reader {
        match item {
            Ok(event) if several && !event.has(keys::BENCH) && !event.has(keys::RANK) => {
                giver.give(event.with(keys::BENCH, Value::from(name)));
                events += 1;
            }
            Ok(event) => {
                giver.give(event);
                events += 1;
            }
            Err(error @ (LogError::Truncated { .. } | LogError::Corrupt { .. })) => {
                eprintln!("giving log serve: {name}: {error}");
            }
            Err(error) => {
                eprintln!("giving log serve: {name}: {error}");
                break;
            }
        }
    }
    eprintln!("giving log serve: {name}: {events} events replayed");
}
