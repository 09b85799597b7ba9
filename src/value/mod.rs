//! The dynamic value carried by every field of an [`Event`](crate::Event).

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

mod error;
mod lazy;

pub use error::ResolveError;

/// A value given by a training loop: a number, a string, a nested list or map, or a
/// [`Lazy`](Value::Lazy) value that the consumer reads when it needs it.
///
/// Values come from ordinary Rust values through `From`, which is what [`give!`](macro@crate::give)
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
///
/// Floats are stored as `f64`; one given as an `f32` prints as that `f32`, not widened:
///
/// ```
/// use giving::Value;
///
/// assert_eq!(Value::from(0.1f32).to_string(), "0.1");
/// assert_eq!(Value::from(0.1f64).to_string(), "0.1");
/// assert_eq!(Value::from(1.0f64 / 3.0).to_string(), "0.3333333333333333");
/// assert_eq!(format!("{:.3}", Value::from(0.1f32)), "0.100");
/// ```
#[derive(Debug, Default)]
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

impl Clone for Value {
    /// A number, `bool` or null is copied bit for bit, inline: it owns nothing, and the
    /// derived `clone` was a jump on the variant to a copy of each (about ten instructions for
    /// each field of each event a probe's frame gives, which clones the values it keeps). The
    /// variants that own something are cloned out of line: a count or an allocation anyway.
    #[inline(always)]
    fn clone(&self) -> Self {
        if self.is_scalar() {
            // SAFETY: a scalar variant holds no pointer and has no drop glue, so the copy is
            // the value `clone` makes and dropping either leaves the other valid.
            return unsafe { std::ptr::read(self) };
        }
        self.clone_owning()
    }
}

impl Value {
    /// [`Clone::clone`] of a variant that owns something (or, unused, of a scalar).
    #[inline(never)]
    fn clone_owning(&self) -> Self {
        match self {
            Value::Str(text) => Value::Str(Arc::clone(text)),
            Value::Bytes(bytes) => Value::Bytes(bytes.clone()),
            Value::List(items) => Value::List(items.clone()),
            Value::Map(map) => Value::Map(map.clone()),
            Value::Lazy(lazy) => Value::Lazy(lazy.clone()),
            Value::Null => Value::Null,
            Value::Bool(flag) => Value::Bool(*flag),
            Value::I64(n) => Value::I64(*n),
            Value::U64(n) => Value::U64(*n),
            Value::F64(x) => Value::F64(*x),
        }
    }
}

/// Something that can produce a [`Value`] later, on the consumer's side.
///
/// Implement it for a handle to data that is expensive to read on the producer's thread, such
/// as a burn tensor on a GPU: reading it there would force a device sync on every step.
/// `giving-models` implements it for burn tensors.
///
/// ```
/// use giving::{Resolve, ResolveError, Value};
///
/// struct Deferred(f64);
///
/// impl Resolve for Deferred {
///     fn resolve(&self) -> Result<Value, ResolveError> {
///         Ok(Value::F64(self.0 * 2.0))
///     }
/// }
///
/// let value = Value::lazy(Deferred(0.5));
/// assert_eq!(value.resolved().unwrap(), &Value::F64(1.0));
/// ```
pub trait Resolve: Any + Send + Sync {
    /// Reads the value. Called at most once per [`LazyValue`], by whoever needs it first.
    fn resolve(&self) -> Result<Value, ResolveError>;

    /// A function that reads many values of this type at once, for sources that are cheaper
    /// to read together than one by one (tensors on one device: one transfer and one device
    /// sync instead of one per value). [`LazyValue::resolve_all`] hands it every unread value
    /// of this type it was given, in order, and expects one result per value, in the same
    /// order. `None` (the default): values are read one by one.
    fn read_many(&self) -> Option<ReadMany> {
        None
    }
}

/// Reads many sources of one type at once; see [`Resolve::read_many`]. The sources it is given
/// are all of the type whose `read_many` returned it (downcast them with
/// `(source as &dyn Any).downcast_ref::<T>()`).
pub type ReadMany = fn(&[&dyn Resolve]) -> Vec<Result<Value, ResolveError>>;

/// A shared, resolve-once handle to a [`Resolve`]: the payload of [`Value::Lazy`].
///
/// Cloning is cheap (one reference count); every clone shares the cached result, so however
/// many consumers read a lazy loss, the device is read once.
#[derive(Clone)]
pub struct LazyValue {
    inner: Arc<LazyInner>,
}

struct LazyInner {
    source: Box<dyn Resolve>,
    cached: OnceLock<Result<Value, ResolveError>>,
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

    /// Whether this is a scalar (`Null`, a bool or a number): a value that owns no memory.
    ///
    /// ```
    /// use giving::Value;
    ///
    /// assert!(Value::F64(0.5).is_scalar());
    /// assert!(!Value::from("loss").is_scalar());
    /// ```
    #[inline]
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Value::Null | Value::Bool(_) | Value::I64(_) | Value::U64(_) | Value::F64(_)
        )
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

/// Values compare by content, and numbers compare **numerically** across [`Value::I64`],
/// [`Value::U64`] and [`Value::F64`], as in Python: `I64(5) == U64(5) == F64(5.0)`, so
/// `where_eq("step", 5)` matches the `usize` steps [`iterate`](fn@crate::iterate) gives. The
/// comparison is exact (no rounding through `f64`); NaN equals nothing. A lazy value compares
/// as the value it resolves to (an unresolvable one equals nothing).
///
/// ```
/// use giving::Value;
///
/// assert_eq!(Value::I64(5), Value::U64(5));
/// assert_eq!(Value::F64(4.0), Value::I64(4));
/// assert_ne!(Value::F64(4.5), Value::I64(4));
/// assert_ne!(Value::I64(-1), Value::U64(u64::MAX));
/// assert_ne!(Value::F64(f64::NAN), Value::F64(f64::NAN));
/// ```
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
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            (a, b) => match (Number::of(a), Number::of(b)) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }
}

/// Equality is numeric (see `PartialEq`). It is an equivalence for every value but NaN, which
/// equals nothing, as in Python, where `distinct` lets every NaN through.
impl Eq for Value {}

/// Hashes agree with the numeric equality: `I64(4)`, `U64(4)` and `F64(4.0)` hash alike, so
/// `distinct` treats them as one value. A lazy value hashes as the value it resolves to.
impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Value::Lazy(lazy) => match lazy.resolve() {
                Ok(value) => value.hash(state),
                Err(_) => state.write_u8(9),
            },
            Value::Null => state.write_u8(0),
            Value::Bool(b) => {
                state.write_u8(1);
                b.hash(state);
            }
            Value::Str(s) => {
                state.write_u8(2);
                s.hash(state);
            }
            Value::Bytes(b) => {
                state.write_u8(3);
                b.hash(state);
            }
            Value::List(items) => {
                state.write_u8(4);
                items.hash(state);
            }
            Value::Map(map) => {
                state.write_u8(5);
                map.hash(state);
            }
            number => match Number::of(number) {
                Some(Number::Int(i)) => {
                    state.write_u8(6);
                    i.hash(state);
                }
                Some(Number::Float(f)) => {
                    state.write_u8(7);
                    f.to_bits().hash(state);
                }
                None => state.write_u8(8),
            },
        }
    }
}

/// A number in a form where integers and integral floats compare exactly.
#[derive(PartialEq)]
enum Number {
    Int(i128),
    /// A float with a fractional part, an infinity or NaN.
    Float(f64),
}

impl Number {
    fn of(value: &Value) -> Option<Number> {
        match *value {
            Value::I64(i) => Some(Number::Int(i128::from(i))),
            Value::U64(u) => Some(Number::Int(i128::from(u))),
            Value::F64(f) => {
                // Integral floats within the integers' range compare as integers, exactly.
                let integral = f.is_finite() && f.trunc() == f && f.abs() < 2f64.powi(64);
                Some(if integral {
                    Number::Int(f as i128)
                } else {
                    Number::Float(f)
                })
            }
            _ => None,
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
            Value::F64(x) => {
                // burn's floats and most losses are `f32`, widened to `f64` when given: one
                // that is exactly an `f32` prints as that `f32` (`0.1`, not
                // `0.10000000149011612`), the shortest form that reads back as it. A precision
                // asked for (`{:.3}`) formats the `f64` as it is.
                let narrow = *x as f32;
                if f.precision().is_none() && f64::from(narrow) == *x {
                    fmt::Display::fmt(&narrow, f)
                } else {
                    fmt::Display::fmt(x, f)
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_is_equal_to_its_value_and_shares_what_it_points_to() {
        let text: Arc<str> = Arc::from("loss");
        let values = [
            Value::Null,
            Value::Bool(true),
            Value::I64(-3),
            Value::U64(7),
            Value::F64(0.25),
            Value::Str(text.clone()),
            Value::Bytes(vec![1, 2]),
            Value::List(vec![Value::U64(1), Value::from("a")]),
            Value::Map(BTreeMap::from([("k".to_owned(), Value::F64(1.5))])),
        ];
        let clones: Vec<Value> = values.iter().map(Value::clone).collect();
        assert_eq!(clones, values);
        assert_eq!(
            Arc::strong_count(&text),
            3,
            "the string's count, not its text"
        );
        drop(clones);
        drop(values);
        assert_eq!(Arc::strong_count(&text), 1, "each dropped once");
    }
}
