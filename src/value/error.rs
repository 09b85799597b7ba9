//! Why a lazy value could not be read.

/// Why a [`Resolve`](crate::Resolve) could not produce its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not resolve lazy value: {message}")]
pub struct ResolveError {
    message: String,
}

impl ResolveError {
    /// An error with a message saying what went wrong.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message given at construction.
    pub fn message(&self) -> &str {
        &self.message
    }
}
