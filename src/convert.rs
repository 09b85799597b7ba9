//! Conversions between Rust values and [`Value`]: `From` for giving, [`FromValue`] for taking.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::{LazyValue, Value};

macro_rules! from_int {
    ($variant:ident as $target:ty: $($source:ty),*) => {$(
        impl From<$source> for Value {
            fn from(x: $source) -> Value {
                Value::$variant(x as $target)
            }
        }
    )*};
}

from_int!(I64 as i64: i8, i16, i32, i64, isize);
from_int!(U64 as u64: u8, u16, u32, u64, usize);

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::F64(x)
    }
}

impl From<f32> for Value {
    fn from(x: f32) -> Value {
        Value::F64(f64::from(x))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<()> for Value {
    fn from(_: ()) -> Value {
        Value::Null
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(Arc::from(s))
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::Str(Arc::from(s.as_str()))
    }
}

impl From<Arc<str>> for Value {
    fn from(s: Arc<str>) -> Value {
        Value::Str(s)
    }
}

impl From<LazyValue> for Value {
    fn from(lazy: LazyValue) -> Value {
        Value::Lazy(lazy)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(option: Option<T>) -> Value {
        option.map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value> + Clone> From<&[T]> for Value {
    fn from(items: &[T]) -> Value {
        Value::List(items.iter().cloned().map(Into::into).collect())
    }
}

impl<T: Into<Value>, const N: usize> From<[T; N]> for Value {
    fn from(items: [T; N]) -> Value {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl<K: Into<String>, V: Into<Value>> From<BTreeMap<K, V>> for Value {
    fn from(map: BTreeMap<K, V>) -> Value {
        Value::Map(map.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl<K: Into<String>, V: Into<Value>, S> From<HashMap<K, V, S>> for Value {
    fn from(map: HashMap<K, V, S>) -> Value {
        Value::Map(map.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

macro_rules! from_tuple {
    ($($name:ident),+) => {
        impl<$($name: Into<Value>),+> From<($($name,)+)> for Value {
            #[allow(non_snake_case)]
            fn from(($($name,)+): ($($name,)+)) -> Value {
                Value::List(vec![$($name.into()),+])
            }
        }
    };
}

from_tuple!(A, B);
from_tuple!(A, B, C);
from_tuple!(A, B, C, D);

/// How [`give!`](macro@crate::give) turns its arguments into values without consuming them: the
/// variable you give stays usable after the call.
///
/// Implemented for every `Clone` type that converts into a [`Value`].
#[diagnostic::on_unimplemented(
    message = "`give!` cannot give a `{Self}`: it is not a value giving knows (`Clone` and `Into<giving::Value>`)",
    label = "given here",
    note = "a burn tensor is given lazily, read by the consumer off the training thread: `give!(loss = giving_burn::LazyTensor::detached(&loss))`",
    note = "a type of your own: implement `From<{Self}> for giving::Value` (and `Clone`), or give its fields"
)]
pub trait ToValue {
    /// A [`Value`] made from a clone of `self`.
    fn to_value(&self) -> Value;
}

impl<T: Clone + Into<Value>> ToValue for T {
    fn to_value(&self) -> Value {
        self.clone().into()
    }
}

/// Why a [`Value`] could not be read as the requested Rust type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("expected {expected}, found {actual}")]
pub struct TypeMismatch {
    /// The Rust type asked for.
    pub expected: &'static str,
    /// What the value was, with its content where short (`str "abc"`, `f64 0.5`).
    pub actual: String,
}

impl TypeMismatch {
    #[cold]
    fn new(expected: &'static str, value: &Value) -> Self {
        let actual = match value {
            Value::Null => "null".to_owned(),
            Value::List(items) => format!("list of {}", items.len()),
            Value::Map(map) => format!("map of {}", map.len()),
            Value::Bytes(b) => format!("{} bytes", b.len()),
            Value::Str(s) if s.len() > 40 => {
                format!("str \"{}…\"", &s[..s.floor_char_boundary(40)])
            }
            Value::Str(s) => format!("str \"{s}\""),
            other => format!("{} {other}", other.kind()),
        };
        Self { expected, actual }
    }
}

/// Reads a Rust value out of a [`Value`]: what [`Event::get_as`](crate::Event::get_as) and the
/// keyed operator `key::<T>` use.
///
/// Numbers convert where no information is lost or where it is the usual intent: any number
/// reads as `f64`/`f32`; integers read as any integer type they fit in; a float never reads as
/// an integer. Lazy values are resolved first.
///
/// ```
/// use giving::{FromValue, Value};
///
/// assert_eq!(f64::from_value(&Value::U64(3)), Ok(3.0));
/// assert!(u8::from_value(&Value::I64(300)).is_err());
/// assert_eq!(<(u64, u64)>::from_value(&Value::from((1u64, 2u64))), Ok((1, 2)));
/// ```
pub trait FromValue: Sized {
    /// The value as `Self`, or what it was instead.
    fn from_value(value: &Value) -> Result<Self, TypeMismatch>;
}

/// Resolves a lazy value before conversion; a failed resolution reads as a mismatch naming it.
/// Inline for the values that are there already (a pipeline converts one per event), the lazy
/// case out of line.
#[inline]
fn resolve<'a>(value: &'a Value, expected: &'static str) -> Result<&'a Value, TypeMismatch> {
    match value {
        Value::Lazy(_) => resolve_lazy(value, expected),
        ready => Ok(ready),
    }
}

#[cold]
#[inline(never)]
fn resolve_lazy<'a>(value: &'a Value, expected: &'static str) -> Result<&'a Value, TypeMismatch> {
    value.resolved().map_err(|error| TypeMismatch {
        expected,
        actual: format!("lazy value that failed to resolve ({})", error.message()),
    })
}

impl FromValue for Value {
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        Ok(value.clone())
    }
}

impl FromValue for f64 {
    #[inline]
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        match resolve(value, "f64")? {
            Value::F64(x) => Ok(*x),
            Value::I64(x) => Ok(*x as f64),
            Value::U64(x) => Ok(*x as f64),
            other => Err(TypeMismatch::new("f64", other)),
        }
    }
}

impl FromValue for f32 {
    #[inline]
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        match resolve(value, "f32")? {
            Value::F64(x) => Ok(*x as f32),
            Value::I64(x) => Ok(*x as f32),
            Value::U64(x) => Ok(*x as f32),
            other => Err(TypeMismatch::new("f32", other)),
        }
    }
}

macro_rules! from_value_int {
    ($($target:ty),*) => {$(
        impl FromValue for $target {
            #[inline]
            fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
                let value = resolve(value, stringify!($target))?;
                let converted = match value {
                    Value::I64(x) => <$target>::try_from(*x).ok(),
                    Value::U64(x) => <$target>::try_from(*x).ok(),
                    _ => None,
                };
                converted.ok_or_else(|| TypeMismatch::new(stringify!($target), value))
            }
        }
    )*};
}

from_value_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl FromValue for bool {
    #[inline]
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        match resolve(value, "bool")? {
            Value::Bool(b) => Ok(*b),
            other => Err(TypeMismatch::new("bool", other)),
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        match resolve(value, "String")? {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(TypeMismatch::new("String", other)),
        }
    }
}

impl FromValue for Arc<str> {
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        match resolve(value, "str")? {
            Value::Str(s) => Ok(s.clone()),
            other => Err(TypeMismatch::new("str", other)),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        match resolve(value, "Option")? {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
        match resolve(value, "Vec")? {
            Value::List(items) => items.iter().map(T::from_value).collect(),
            other => Err(TypeMismatch::new("Vec", other)),
        }
    }
}

macro_rules! from_value_tuple {
    ($len:literal: $($name:ident),+) => {
        impl<$($name: FromValue),+> FromValue for ($($name,)+) {
            fn from_value(value: &Value) -> Result<Self, TypeMismatch> {
                match resolve(value, concat!("tuple of ", $len))? {
                    Value::List(items) if items.len() == $len => {
                        let mut items = items.iter();
                        Ok(($($name::from_value(items.next().expect("length checked"))?,)+))
                    }
                    other => Err(TypeMismatch::new(concat!("tuple of ", $len), other)),
                }
            }
        }
    };
}

from_value_tuple!(2: A, B);
from_value_tuple!(3: A, B, C);
from_value_tuple!(4: A, B, C, D);
