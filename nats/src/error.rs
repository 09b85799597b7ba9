//! [`NatsError`]: what can go wrong publishing to or watching a NATS server.

/// An error of the NATS publisher or fan-in, naming what was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NatsError {
    /// A run name or rank cannot be part of a subject.
    #[error("{what} {value:?} cannot be part of a NATS subject: {reason}")]
    Subject {
        /// `run name`, `rank`.
        what: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An environment variable that should hold a number does not.
    #[error("{variable}={value:?}: expected a non-negative integer")]
    Env {
        /// The variable (`RANK`, `LOCAL_RANK`, `WORLD_SIZE`).
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// The server address cannot be used.
    #[error("cannot use NATS server `{url}`: {message}")]
    Connect {
        /// The address given.
        url: String,
        /// Why.
        message: String,
    },
    /// Subscribing failed.
    #[error("cannot subscribe to `{subject}` on `{url}`: {message}")]
    Subscribe {
        /// The subject.
        subject: String,
        /// The server.
        url: String,
        /// Why.
        message: String,
    },
    /// JetStream is not available, or the run's stream cannot be made or read.
    #[error("JetStream on `{url}`, run {run:?}: {message}")]
    JetStream {
        /// The server.
        url: String,
        /// The run.
        run: String,
        /// Why.
        message: String,
    },
    /// A credentials, nkey or certificate file cannot be used (its content is never shown).
    #[error("NATS server `{url}`: cannot use the {what} file {path:?}: {message}")]
    Auth {
        /// The server, its password masked.
        url: String,
        /// `credentials`, `nkey seed`, `CA certificate`, `client certificate`, `client key`.
        what: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        message: String,
    },
    /// The runtime of the publisher's thread could not be built.
    #[error("cannot start the NATS runtime: {0}")]
    Runtime(std::io::Error),
}
