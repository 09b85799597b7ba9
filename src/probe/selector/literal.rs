//! The literal of a value condition (`f(x=1) > y`, `f > name='adam'`) and how it compares with
//! a probed [`Value`].

use std::fmt;

use crate::Value;

/// The value a condition (`x=1`) asks a variable to have.
#[derive(Debug, Clone)]
pub enum Literal {
    /// An integer: `x=3`, `x=-1`.
    Int(i64),
    /// A floating-point number: `x=3.7`, `x=1e-3`.
    Float(f64),
    /// A string: `x='wow'` or `x="wow"`.
    Str(String),
    /// `true`/`false` (ptera's `True`/`False` too).
    Bool(bool),
    /// `None` or `null`: the variable is `None` or `()`.
    Null,
}

impl PartialEq for Literal {
    fn eq(&self, other: &Literal) -> bool {
        match (self, other) {
            (Literal::Int(a), Literal::Int(b)) => a == b,
            // Bitwise, so that a literal equals itself (selectors are compared as parsed).
            (Literal::Float(a), Literal::Float(b)) => a.to_bits() == b.to_bits(),
            (Literal::Str(a), Literal::Str(b)) => a == b,
            (Literal::Bool(a), Literal::Bool(b)) => a == b,
            (Literal::Null, Literal::Null) => true,
            _ => false,
        }
    }
}

impl Eq for Literal {}

impl Literal {
    /// Whether `value` is this literal, numbers compared by value whatever their Rust type
    /// (`epoch=1` holds for a `usize` 1, an `i32` 1 and an `f64` 1.0), as Python compares them.
    pub fn matches(&self, value: &Value) -> bool {
        match (self, value) {
            (Literal::Null, Value::Null) => true,
            (Literal::Bool(a), Value::Bool(b)) => a == b,
            (Literal::Str(a), Value::Str(b)) => **a == **b,
            (Literal::Int(a), Value::I64(b)) => a == b,
            (Literal::Int(a), Value::U64(b)) => u64::try_from(*a).is_ok_and(|a| a == *b),
            // Through f64, exact for the integers a float holds exactly: 1 == 1.0, as Python.
            (Literal::Int(a), Value::F64(b)) => (*a as f64) == *b,
            (Literal::Float(a), Value::F64(b)) => a == b,
            (Literal::Float(a), Value::I64(b)) => *a == (*b as f64),
            (Literal::Float(a), Value::U64(b)) => *a == (*b as f64),
            _ => false,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Float(x) => write!(f, "{x:?}"),
            Literal::Str(s) => write!(f, "'{s}'"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Null => f.write_str("None"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_by_value_across_types_and_others_by_kind() {
        assert!(Literal::Int(1).matches(&Value::U64(1)));
        assert!(Literal::Int(1).matches(&Value::I64(1)));
        assert!(Literal::Int(1).matches(&Value::F64(1.0)));
        assert!(!Literal::Int(-1).matches(&Value::U64(u64::MAX)));
        assert!(Literal::Float(3.7).matches(&Value::F64(3.7)));
        assert!(!Literal::Float(3.7).matches(&Value::I64(3)));
        assert!(Literal::Str("wow".into()).matches(&Value::from("wow")));
        assert!(!Literal::Str("1".into()).matches(&Value::U64(1)));
        assert!(Literal::Bool(true).matches(&Value::Bool(true)));
        assert!(Literal::Null.matches(&Value::Null));
        assert!(!Literal::Null.matches(&Value::Bool(false)));
    }
}
