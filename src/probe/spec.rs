//! How a probed variable becomes a [`Value`], chosen at the `#[probe]` call site by autoref
//! specialisation (the most specific impl needs the fewest dereferences of `&&&Probed(x)`):
//!
//! 1. `Result<T: ToValue, E>`: the `Ok` value (`null` for an `Err`, which `#error` reports);
//! 2. `T: ToValue`: the value;
//! 3. anything else: the type's name, so `f > loader` still fires (and can be overridden).
//!
//! In a generic function the choice is made for the type parameter as declared: a `T` without
//! a `ToValue` bound gives its name.

use std::fmt::Display;

use crate::{ToValue, Value};

/// A reference to a probed value, for the specialisation below.
#[doc(hidden)]
pub struct Probed<'a, T: ?Sized>(pub &'a T);

/// Level 1: a `Result` whose `Ok` type converts.
#[doc(hidden)]
pub trait ResultValue {
    fn probe_value(&self) -> Value;
}

impl<T: ToValue, E> ResultValue for &&Probed<'_, Result<T, E>> {
    fn probe_value(&self) -> Value {
        match self.0 {
            Ok(value) => value.to_value(),
            Err(_) => Value::Null,
        }
    }
}

/// Level 2: a value that converts.
#[doc(hidden)]
pub trait ToValueValue {
    fn probe_value(&self) -> Value;
}

impl<T: ToValue + ?Sized> ToValueValue for &Probed<'_, T> {
    fn probe_value(&self) -> Value {
        self.0.to_value()
    }
}

/// Level 3: anything: its type's name.
#[doc(hidden)]
pub trait NameValue {
    fn probe_value(&self) -> Value;
}

impl<T: ?Sized> NameValue for Probed<'_, T> {
    fn probe_value(&self) -> Value {
        Value::from(std::any::type_name::<T>())
    }
}

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
