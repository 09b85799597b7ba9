//! [`LogCommand`]: the `giving log …` clap subcommands (the `cli` feature).

use std::io::Write;
use std::path::PathBuf;

use super::error::LogError;
use super::inspect::{dump, output_error, stats};

/// The `giving log …` subcommands, for the `giving` binary to embed:
/// `#[command(subcommand)] log: LogCommand`, then `log.run()`.
///
/// ```
/// use clap::Parser;
/// use giving_instruments::log::LogCommand;
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
    /// Runs the subcommand, printing to stdout. A log that ends early is reported on stderr
    /// as a warning (what could be read was printed); a file that is not a log is an error.
    pub fn run(&self) -> Result<(), LogError> {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let result = match self {
            LogCommand::Dump { file, json } => dump(file, *json, &mut out).map(|s| s.cut),
            LogCommand::Stats { file } => stats(file).and_then(|stats| {
                write!(out, "{stats}").map_err(output_error)?;
                Ok(None)
            }),
        };
        let flushed = out.flush().map_err(output_error);
        match result.and_then(|cut| flushed.map(|()| cut)) {
            Ok(Some(cut)) => {
                if matches!(self, LogCommand::Dump { .. }) {
                    eprintln!("warning: {cut}");
                }
                Ok(())
            }
            Ok(None) => Ok(()),
            // `giving log dump FILE | head`: the reader went away, which is not an error.
            Err(LogError::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
                Ok(())
            }
            Err(error) => Err(error),
        }
    }
}
