//! [`LogCommand`]: the `giving log …` clap subcommands (the `cli` feature).

use std::io::Write;
use std::path::PathBuf;

use crate::error::LogError;
use crate::inspect::{LogHealth, dump, output_error, stats};

/// The `giving log …` subcommands, for the `giving` binary to embed:
/// `#[command(subcommand)] log: LogCommand`, then `log.run()`.
///
/// [`run`](LogCommand::run) returns how whole the log is, for the binary's exit code
/// ([`LogHealth::exit_code`]): **0** the log was closed cleanly; **3** it is cut (no end
/// record: the run was killed or is still running; or an incomplete record at the end);
/// **4** it is corrupt (damaged bytes were skipped, or the end record counts other events
/// than were read). Every event that could be read was printed in each case. A file that is
/// not a log, or cannot be read, is an `Err` (exit code 1).
///
/// ```
/// use clap::Parser;
/// use giving_log::LogCommand;
///
/// #[derive(Parser)]
/// struct Cli {
///     #[command(subcommand)]
///     log: LogCommand,
/// }
///
/// let cli = Cli::parse_from(["giving", "dump", "run.msgpack", "--json"]);
/// assert!(matches!(cli.log, LogCommand::Dump { json: true, .. }));
/// ```
#[derive(Debug, Clone, clap::Subcommand)]
pub enum LogCommand {
    /// Print every event of a log, one per line.
    Dump {
        /// The log file.
        file: PathBuf,
        /// Print JSON lines instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Summarise a log: events per key, time span, min/max/mean of numeric keys.
    Stats {
        /// The log file.
        file: PathBuf,
    },
}

impl LogCommand {
    /// Runs the subcommand, printing to stdout, and returns how whole the log is (see the
    /// type's doc for the exit codes). `dump` reports a cut or damaged log on stderr, after
    /// the events; `stats` reports it in its summary. A file that is not a log is an error.
    pub fn run(&self) -> Result<LogHealth, LogError> {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        self.run_to(&mut out, &mut std::io::stderr())
    }

    /// [`run`](LogCommand::run), printing to `out` and warnings to `warnings`. A reader of
    /// the output that goes away (`giving log dump FILE | head`) is not an error: the result
    /// is then [`LogHealth::Clean`], as the log was not read to its end.
    pub fn run_to(
        &self,
        out: &mut impl Write,
        warnings: &mut impl Write,
    ) -> Result<LogHealth, LogError> {
        let result = match self {
            LogCommand::Dump { file, json } => dump(file, *json, out).and_then(|summary| {
                for problem in summary.problems() {
                    writeln!(warnings, "warning: {problem}").map_err(output_error)?;
                }
                Ok(summary.health())
            }),
            LogCommand::Stats { file } => stats(file).and_then(|stats| {
                write!(out, "{stats}").map_err(output_error)?;
                Ok(stats.health())
            }),
        };
        let flushed = out.flush().map_err(output_error);
        match result.and_then(|health| flushed.map(|()| health)) {
            Err(LogError::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
                Ok(LogHealth::Clean)
            }
            other => other,
        }
    }
}
