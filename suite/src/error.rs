//! The errors of loading a suite and running it.

use std::path::PathBuf;

/// A suite configuration that cannot be used: names the file, the line (1-based, when it is
/// known) and the key, as `suites/dev.yaml:12: mlp.argv: expected a map or a list`.
#[derive(Debug, thiserror::Error)]
#[error("{}:{}: {key}: {message}", file.display(), line.map_or_else(|| "?".to_owned(), |l| l.to_string()))]
pub struct ConfigError {
    /// The configuration file where the problem is.
    pub file: PathBuf,
    /// The line of the key, when it could be found.
    pub line: Option<usize>,
    /// The key, dotted from the entry (`resnet50.argv`), or `(file)` for a file that does not
    /// read as YAML.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// A failure of the runner itself (not of a benchmark, which is recorded and reported).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A file or folder of the run could not be written or read.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A benchmark cannot be planned on this system (more machines asked than it has).
    #[error("{bench}: {message}")]
    Plan {
        /// The benchmark.
        bench: String,
        /// What is wrong.
        message: String,
    },
    /// A node of the system could not be reached before the run.
    #[error("{message}")]
    Node {
        /// The node's name.
        node: String,
        /// What ssh said.
        message: String,
    },
    /// A run's log could not be created.
    #[error(transparent)]
    Log(#[from] giving_log::LogError),
}
