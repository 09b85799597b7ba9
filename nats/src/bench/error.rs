//! What the bench's parts share, below all of them: the key of the synthetic events'
//! sequence number and the error a measurement stops with.

use crate::error::NatsError;

/// The key of the synthetic events' sequence number (per rank, from 0).
pub const SEQ: &str = "fanin_seq";

/// What can stop a measurement.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// `nats-server` is not on `PATH`.
    #[error("nats-server is not installed (https://nats.io: `nats-server` on PATH)")]
    ServerMissing,
    /// The server could not be started.
    #[error("cannot start nats-server: {0}")]
    Server(std::io::Error),
    /// The server did not accept connections in time.
    #[error("nats-server did not listen on 127.0.0.1:{port}")]
    NotListening {
        /// The port it was told.
        port: u16,
    },
    /// The watcher's runtime could not start.
    #[error("cannot start the watcher's runtime: {0}")]
    Runtime(std::io::Error),
    /// The watcher could not subscribe, or its scope failed.
    #[error("watcher: {0}")]
    Watcher(String),
    /// A rank's identity or connection was refused.
    #[error(transparent)]
    Nats(#[from] NatsError),
    /// A simulated rank failed.
    #[error("rank {rank}: {message}")]
    Rank {
        /// Which.
        rank: u64,
        /// What happened.
        message: String,
    },
}
