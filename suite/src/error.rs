//! The errors of loading a suite and running it.

use std::path::{Path, PathBuf};

/// A suite configuration that cannot be used: names the file, the line (1-based, when it is
/// known) and the key, as `suites/dev.yaml:12: mlp.argv: expected a map or a list`; a problem
/// of the whole file shows neither a line nor a key it does not have
/// (`missing.yaml: cannot read: …`, `bad.yaml:3: not valid YAML: …`).
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", location(file, *line, key))]
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

/// Where a [`ConfigError`] is: `file[:line][: key]`, the key left out for the whole file.
fn location(file: &Path, line: Option<usize>, key: &str) -> String {
    let mut location = file.display().to_string();
    if let Some(line) = line {
        location += &format!(":{line}");
    }
    if key != FILE_KEY {
        location += &format!(": {key}");
    }
    location
}

/// The key of a problem of the whole file (it cannot be read, or is not YAML).
pub(crate) const FILE_KEY: &str = "(file)";

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
