//! `giving trace`: MessagePack logs converted into one timeline (Perfetto or Chrome JSON),
//! one process track per log, aligned on their absolute times.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use giving_instruments::timeline::{TraceFormat, convert};

use crate::out::say;

/// `giving trace LOG... -o OUT [--format perfetto|json]`.
#[derive(Debug, Args)]
pub(crate) struct TraceCommandArgs {
    /// The MessagePack logs to convert (`giving train --log DIR` writes them); several merge
    /// into one trace, a process each.
    #[arg(required = true, value_name = "LOG")]
    logs: Vec<PathBuf>,
    /// The trace to write (a new file); open it in ui.perfetto.dev.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// `perfetto` (protobuf, default) or `json` (Chrome trace events).
    #[arg(long, value_name = "FORMAT", default_value = "perfetto")]
    format: TraceFormat,
}

pub(crate) fn trace(args: TraceCommandArgs) -> Result<()> {
    if args.output.exists() {
        bail!(
            "{} exists: giving trace never overwrites a file",
            args.output.display()
        );
    }
    let done = convert(&args.logs, &args.output, args.format)
        .with_context(|| format!("cannot write the trace {}", args.output.display()))?;
    say!(
        "{}: {} events from {} log(s), {} bytes",
        args.output.display(),
        done.trace.events,
        args.logs.len(),
        done.trace.bytes
    );
    for cut in &done.cut {
        say!(
            "{}: the log was cut; converted up to the cut",
            cut.display()
        );
    }
    if done.damaged > 0 {
        say!("{} damaged region(s) skipped", done.damaged);
    }
    Ok(())
}
