//! `#error`: the error of a function's `Err` return, chosen at the `#[probe]` call site by
//! autoref specialisation on the declared return type (`(&&&Probed(&r)).probe_error()` takes
//! the impl reached with the fewest dereferences): its `Display` where it has one, its type's
//! name otherwise, nothing for a type that is not a `Result`. The return type is written in the
//! signature, so it is fully known where the call is checked (unlike a `let` binding's, which
//! may still be partly inferred: variables are converted at run time, see `values`).

use std::fmt::Display;

use crate::Value;

/// A reference to a returned value, for the specialisation.
#[doc(hidden)]
pub struct Probed<'a, T: ?Sized>(pub &'a T);

/// `#error` level 1: an `Err` whose error displays: its message.
#[doc(hidden)]
pub trait ErrDisplay {
    fn probe_error(&self) -> Option<Value>;
}

impl<T, E: Display> ErrDisplay for &&Probed<'_, Result<T, E>> {
    fn probe_error(&self) -> Option<Value> {
        self.0.as_ref().err().map(|e| Value::from(e.to_string()))
    }
}

/// `#error` level 2: any `Err`: its error type's name.
#[doc(hidden)]
pub trait ErrName {
    fn probe_error(&self) -> Option<Value>;
}

impl<T, E> ErrName for &Probed<'_, Result<T, E>> {
    fn probe_error(&self) -> Option<Value> {
        self.0
            .as_ref()
            .err()
            .map(|_| Value::from(std::any::type_name::<E>()))
    }
}

/// `#error` level 3: not a `Result`: never an error.
#[doc(hidden)]
pub trait NotResult {
    fn probe_error(&self) -> Option<Value>;
}

impl<T: ?Sized> NotResult for Probed<'_, T> {
    fn probe_error(&self) -> Option<Value> {
        None
    }
}
