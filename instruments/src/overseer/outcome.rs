//! [`Outcome`]: what a pipeline's output says about its success.

use std::fmt;

/// What a pipeline's output says about its success: `()`, an `Option`, a `Vec` or a number
/// always succeeded, a `Result` failed with its error (reported as a
/// [`Problem`](crate::Problem) under the instrument's name).
pub trait Outcome: Send + 'static {
    /// The failure's message, if it failed.
    fn failure(&self) -> Option<String>;
}

impl Outcome for () {
    fn failure(&self) -> Option<String> {
        None
    }
}

/// Outputs that cannot fail: what a reduction gives (`min`, `count`, `collect`), for a
/// [`Spawned`](crate::Spawned) handle to return.
macro_rules! never_fails {
    ($($t:ty),* $(,)?) => {$(
        impl Outcome for $t {
            fn failure(&self) -> Option<String> {
                None
            }
        }
    )*};
}

never_fails!(bool, u64, usize, i64, f64);

impl<T: Send + 'static> Outcome for Option<T> {
    fn failure(&self) -> Option<String> {
        None
    }
}

impl<T: Send + 'static> Outcome for Vec<T> {
    fn failure(&self) -> Option<String> {
        None
    }
}

impl<T: Send + 'static, E: fmt::Display + Send + 'static> Outcome for Result<T, E> {
    fn failure(&self) -> Option<String> {
        self.as_ref().err().map(|error| error.to_string())
    }
}
