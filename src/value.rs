//! The dynamic value carried by every field of an [`Event`](crate::Event).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::{LazyValue, Resolve, ResolveError};

/// A value given by a training loop: a number, a string, a nested list or map, or a
/// [`Lazy`](Value::Lazy) value that the consumer reads when it needs it.
///
/// Values come from ordinary Rust values through `From`, which is what [`give!`](crate::give)
/// uses:
///
/// ```
/// use giving::Value;
///
/// assert_eq!(Value::from(0.25), Value::F64(0.25));
/// assert_eq!(Value::from(3usize), Value::U64(3));
/// assert_eq!(Value::from((3, 10)), Value::List(vec![Value::I64(3), Value::I64(10)]));
/// assert_eq!(Value::from(None::<f64>), Value::Null);
/// assert_eq!(Value::from("train").to_string(), "train");
/// ```
#[derive(Clone, Debug, Default)]
pub enum Value {
    /// No value (`None`, `()`).
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    I64(i64),
    /// An unsigned integer (sizes, steps, counts).
    U64(u64),
    /// A floating-point number.
    F64(f64),
    /// A string; shared, so cloning an event never copies it.
    Str(Arc<str>),
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// A list (also what tuples such as `progress: (i, n)` become).
    List(Vec<Value>),
    /// A map with string keys, in key order.
    Map(BTreeMap<String, Value>),
    /// A value not read yet; see [`Resolve`].
    Lazy(LazyValue),
}

impl Value {
    /// A lazy value: `source` is resolved by the first consumer that reads it.
    pub fn lazy(source: impl Resolve) -> Self {
        Value::Lazy(LazyValue::new(source))
    }

    /// The value itself, with a lazy value read (once, then cached).
    pub fn resolved(&self) -> Result<&Value, ResolveError> {
        match self {
            Value::Lazy(lazy) => lazy.resolve(),
            other => Ok(other),
        }
    }

    /// The name of this value's kind, as used in error messages: `null`, `bool`, `i64`, `u64`,
    /// `f64`, `str`, `bytes`, `list`, `map` or `lazy`.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::I64(_) => "i64",
            Value::U64(_) => "u64",
            Value::F64(_) => "f64",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Lazy(_) => "lazy",
        }
    }

    /// The value as an `f64` if it is a number (integers are converted), resolving a lazy value.
    pub fn as_f64(&self) -> Option<f64> {
        match self.resolved().ok()? {
            Value::F64(x) => Some(*x),
            Value::I64(x) => Some(*x as f64),
            Value::U64(x) => Some(*x as f64),
            _ => None,
        }
    }

    /// The string if the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self.resolved().ok()? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the value is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// Values compare by content; a lazy value compares as the value it resolves to (an
/// unresolvable one equals nothing).
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Lazy(a), Value::Lazy(b)) if a.ptr_eq(b) => true,
            (Value::Lazy(_), _) | (_, Value::Lazy(_)) => {
                match (self.resolved(), other.resolved()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                }
            }
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::I64(a), Value::I64(b)) => a == b,
            (Value::U64(a), Value::U64(b)) => a == b,
            (Value::F64(a), Value::F64(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            _ => false,
        }
    }
}

/// Shows the value as a person reads it: `0.25`, `train`, `[3, 10]`, `{a: 1}`. A lazy value is
/// resolved to be shown. Width and precision (`{:.3}`) apply to numbers and strings.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.pad("null"),
            Value::Bool(b) => fmt::Display::fmt(b, f),
            Value::I64(x) => fmt::Display::fmt(x, f),
            Value::U64(x) => fmt::Display::fmt(x, f),
            Value::F64(x) => fmt::Display::fmt(x, f),
            Value::Str(s) => f.pad(s),
            Value::Bytes(b) => write!(f, "<{} bytes>", b.len()),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    fmt::Display::fmt(item, f)?;
                }
                f.write_str("]")
            }
            Value::Map(map) => {
                f.write_str("{")?;
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key}: ")?;
                    fmt::Display::fmt(item, f)?;
                }
                f.write_str("}")
            }
            Value::Lazy(lazy) => match lazy.resolve() {
                Ok(value) => fmt::Display::fmt(value, f),
                Err(error) => write!(f, "<{error}>"),
            },
        }
    }
}
