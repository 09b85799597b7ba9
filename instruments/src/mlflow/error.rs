//! [`MlflowError`]: what went wrong talking to the tracking server.

/// What went wrong talking to the MLflow server; every variant names the URL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MlflowError {
    /// The tracking URI is not an `http://` or `https://` URL.
    #[error("--mlflow {uri:?}: expected an http:// or https:// tracking server URL")]
    Uri {
        /// The URI given.
        uri: String,
    },
    /// The server could not be reached.
    #[error("MLflow server unreachable at `{url}`: {message}")]
    Unreachable {
        /// The request's URL.
        url: String,
        /// Why.
        message: String,
    },
    /// The server refused a request.
    #[error("MLflow `{url}` answered {status}: {body}")]
    Status {
        /// The request's URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// What it said.
        body: String,
    },
    /// The TLS settings cannot be used (a CA file that cannot be read).
    #[error("MLflow `{url}`: TLS: {message}")]
    Tls {
        /// The tracking URI.
        url: String,
        /// Why.
        message: String,
    },
    /// The server's answer lacks what it should hold.
    #[error("MLflow `{url}` answered without {what}")]
    Answer {
        /// The request's URL.
        url: String,
        /// What was missing.
        what: &'static str,
    },
}
