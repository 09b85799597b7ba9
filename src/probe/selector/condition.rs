//! What a condition asks of a variable's value: to equal a literal (`x=1`), or to pass one of
//! ptera's match functions (`i~every(3)`, `i~lt(5)`, `i~throttle(10)`: `ptera.tools`).

use std::sync::{Arc, Mutex, PoisonError};

use super::literal::Literal;
use crate::Value;

/// A capture's condition: the event is given, and an override applies, only while it holds.
///
/// ```
/// use giving::probe::{Condition, Literal, MatchFunction, Selector};
///
/// let s = Selector::parse("f(epoch=1) > i~every(3, start=5)").unwrap();
/// let epoch = &s.elements()[0].captures[0];
/// assert_eq!(epoch.condition, Some(Condition::Equals(Literal::Int(1))));
/// let i = s.focus().unwrap();
/// let every = MatchFunction::Range { start: Some(5.0), end: None, modulo: Some(3.0) };
/// assert_eq!(i.condition, Some(Condition::Matches(every)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `x=1`: the value equals the literal (numbers by value, whatever their types).
    Equals(Literal),
    /// `x~lt(5)`: the value is a number that the match function accepts.
    Matches(MatchFunction),
}

/// ptera's match functions (`ptera.tools`), the names a selector writes after `~`, with the
/// same arguments, defaults and results. A value that is not a number matches none.
#[derive(Debug, Clone, Copy)]
pub enum MatchFunction {
    /// `every(modulo=None, start=0, end=None)` and `between(start, end, modulo=None)`: from
    /// `start` (included) to `end` (excluded), every `modulo` from `start`.
    Range {
        /// The first value that matches (ptera: `start`).
        start: Option<f64>,
        /// The first value past the range (ptera: `end`).
        end: Option<f64>,
        /// Only values `start + k × modulo`.
        modulo: Option<f64>,
    },
    /// `lt(end)`: below `end`.
    Lt(f64),
    /// `lte(end)`: up to `end`.
    Lte(f64),
    /// `gt(start)`: above `start`.
    Gt(f64),
    /// `gte(start)`: from `start`.
    Gte(f64),
    /// `throttle(period)`: the first value, then the first value at or past each `period`
    /// after the last trigger (the trigger moves by `period`, not to the value), and every
    /// repeat of the value last let through.
    Throttle(f64),
}

impl PartialEq for MatchFunction {
    fn eq(&self, other: &MatchFunction) -> bool {
        // Bitwise, as literals are: a selector equals itself as parsed.
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits();
        let same_option = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => same(a, b),
            (None, None) => true,
            _ => false,
        };
        match (self, other) {
            (
                MatchFunction::Range { start, end, modulo },
                MatchFunction::Range {
                    start: s,
                    end: e,
                    modulo: m,
                },
            ) => same_option(*start, *s) && same_option(*end, *e) && same_option(*modulo, *m),
            (MatchFunction::Lt(a), MatchFunction::Lt(b))
            | (MatchFunction::Lte(a), MatchFunction::Lte(b))
            | (MatchFunction::Gt(a), MatchFunction::Gt(b))
            | (MatchFunction::Gte(a), MatchFunction::Gte(b))
            | (MatchFunction::Throttle(a), MatchFunction::Throttle(b)) => same(*a, *b),
            _ => false,
        }
    }
}

impl Eq for MatchFunction {}

impl MatchFunction {
    /// The names a selector may write after `~`.
    pub const NAMES: [&'static str; 7] = ["every", "between", "lt", "lte", "gt", "gte", "throttle"];

    /// The function `name` with its positional and keyword arguments, as ptera's signatures
    /// take them; `Err` says what is wrong with the call.
    pub(super) fn call(
        name: &str,
        positional: &[f64],
        keywords: &[(String, f64)],
    ) -> Result<MatchFunction, String> {
        let parameters: &[&str] = match name {
            "every" => &["modulo", "start", "end"],
            "between" => &["start", "end", "modulo"],
            "lt" | "lte" => &["end"],
            "gt" | "gte" => &["start"],
            "throttle" => &["period"],
            _ => return Err(format!("`{name}` is not a match function")),
        };
        if positional.len() > parameters.len() {
            return Err(format!(
                "`{name}` takes at most {} argument(s) ({})",
                parameters.len(),
                parameters.join(", ")
            ));
        }
        let mut values: Vec<Option<f64>> = vec![None; parameters.len()];
        for (slot, value) in values.iter_mut().zip(positional) {
            *slot = Some(*value);
        }
        for (key, value) in keywords {
            let Some(at) = parameters.iter().position(|p| p == key) else {
                return Err(format!(
                    "`{name}` has no argument `{key}` (its arguments: {})",
                    parameters.join(", ")
                ));
            };
            if values[at].replace(*value).is_some() {
                return Err(format!("`{name}`'s argument `{key}` given twice"));
            }
        }
        let required = |at: usize| {
            values[at].ok_or_else(|| format!("`{name}` needs its argument `{}`", parameters[at]))
        };
        Ok(match name {
            // ptera's `every` starts at 0 unless told otherwise; `between` has no default.
            "every" => MatchFunction::Range {
                start: Some(values[1].unwrap_or(0.0)),
                end: values[2],
                modulo: values[0],
            },
            "between" => MatchFunction::Range {
                start: Some(required(0)?),
                end: Some(required(1)?),
                modulo: values[2],
            },
            "lt" => MatchFunction::Lt(required(0)?),
            "lte" => MatchFunction::Lte(required(0)?),
            "gt" => MatchFunction::Gt(required(0)?),
            "gte" => MatchFunction::Gte(required(0)?),
            _ => {
                let period = required(0)?;
                // Also refuses a NaN period (which no comparison passes).
                if period.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    return Err(format!("`throttle`'s period must be above 0, not {period}"));
                }
                MatchFunction::Throttle(period)
            }
        })
    }

    /// Whether `x` matches (`throttle` excepted: it needs its state, [`Matching`]).
    fn accepts(self, x: f64) -> bool {
        match self {
            MatchFunction::Range { start, end, modulo } => {
                if start.is_some_and(|s| x < s) || end.is_some_and(|e| x >= e) {
                    return false;
                }
                // ptera: `((value - (start or 0)) + modulo) % modulo == 0`, Python's `%`
                // (the divisor's sign): `rem_euclid` for a positive modulo.
                modulo.is_none_or(|m| ((x - start.unwrap_or(0.0)) + m).rem_euclid(m) == 0.0)
            }
            MatchFunction::Lt(end) => x < end,
            MatchFunction::Lte(end) => x <= end,
            MatchFunction::Gt(start) => x > start,
            MatchFunction::Gte(start) => x >= start,
            MatchFunction::Throttle(_) => true,
        }
    }
}

/// A number's value for a match function: integers and floats, compared as Python compares
/// them (through `f64`).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::I64(i) => Some(*i as f64),
        Value::U64(u) => Some(*u as f64),
        Value::F64(x) => Some(*x),
        _ => None,
    }
}

/// `throttle`'s current value and next trigger, once it has seen a value.
type ThrottleState = Arc<Mutex<Option<(f64, f64)>>>;

/// A condition as one probe checks it: with the state of its `throttle`, if it is one (per
/// probe and function: each probe opened on a selector throttles on its own, as each of
/// ptera's `select` calls makes its own `throttle`).
#[derive(Debug, Clone)]
pub(crate) struct Matching {
    condition: Condition,
    /// A `throttle`'s state; `None` for any other condition, which has none.
    throttle: Option<ThrottleState>,
}

impl Matching {
    /// `condition` with a fresh state.
    pub(crate) fn new(condition: &Condition) -> Self {
        let throttles = matches!(condition, Condition::Matches(MatchFunction::Throttle(_)));
        Self {
            condition: condition.clone(),
            throttle: throttles.then(|| Arc::new(Mutex::new(None))),
        }
    }

    /// Whether `value` meets the condition (a throttle that lets it through moves on).
    pub(crate) fn matches(&self, value: &Value) -> bool {
        let function = match &self.condition {
            Condition::Equals(literal) => return literal.matches(value),
            Condition::Matches(function) => *function,
        };
        let Some(x) = number(value) else {
            return false;
        };
        let (MatchFunction::Throttle(period), Some(throttle)) = (function, &self.throttle) else {
            return function.accepts(x);
        };
        let mut state = throttle.lock().unwrap_or_else(PoisonError::into_inner);
        match *state {
            None => {
                *state = Some((x, x + period));
                true
            }
            Some((current, _)) if x == current => true,
            Some((_, trigger)) if x >= trigger => {
                *state = Some((x, trigger + period));
                true
            }
            Some(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(selector_call: &str, values: impl IntoIterator<Item = i64>) -> Vec<i64> {
        let (name, rest) = selector_call.split_once('(').unwrap();
        let arguments = rest.trim_end_matches(')');
        let (mut positional, mut keywords) = (Vec::new(), Vec::new());
        for argument in arguments
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            match argument.split_once('=') {
                Some((k, v)) => keywords.push((k.to_owned(), v.parse().unwrap())),
                None => positional.push(argument.parse().unwrap()),
            }
        }
        let function = MatchFunction::call(name, &positional, &keywords).unwrap();
        let matching = Matching::new(&Condition::Matches(function));
        values
            .into_iter()
            .filter(|i| matching.matches(&Value::I64(*i)))
            .collect()
    }

    /// ptera 1.4.1's `tests/test_tools.py`, each assertion on the function itself.
    #[test]
    fn ptera_tools_results() {
        let r = |a: i64, b: i64, s: usize| (a..b).step_by(s).collect::<Vec<_>>();
        assert_eq!(through("every()", 0..10), r(0, 10, 1));
        assert_eq!(through("every(2)", 0..10), r(0, 10, 2));
        assert_eq!(through("every(3)", 0..10), r(0, 10, 3));
        assert_eq!(through("every(3, start=5)", 0..10), r(5, 10, 3));
        assert_eq!(through("every(3, end=5)", 0..10), r(0, 5, 3));
        assert_eq!(through("between(2, 5)", 0..10), r(2, 5, 1));
        assert_eq!(through("between(-2, 2)", (-5..5).step_by(2)), [-1, 1]);
        assert_eq!(through("lt(0)", 0..10), Vec::<i64>::new());
        assert_eq!(through("lt(5)", 0..10), r(0, 5, 1));
        assert_eq!(through("lte(0)", 0..10), [0]);
        assert_eq!(through("lte(5)", 0..10), r(0, 6, 1));
        assert_eq!(through("gt(9)", 0..10), Vec::<i64>::new());
        assert_eq!(through("gt(5)", 0..10), r(6, 10, 1));
        assert_eq!(through("gte(0)", 0..10), r(0, 10, 1));
        assert_eq!(through("gte(5)", 0..10), r(5, 10, 1));
        assert_eq!(through("throttle(5)", 0..20), [0, 5, 10, 15]);
        assert_eq!(through("throttle(5)", (0..20).step_by(2)), [0, 6, 10, 16]);
        assert_eq!(
            through("throttle(5)", (-3..20).step_by(3)),
            [-3, 3, 9, 12, 18]
        );
    }

    #[test]
    fn a_bad_call_says_what_is_wrong() {
        let call = |name, positional: &[f64], keywords: &[(&str, f64)]| {
            let keywords: Vec<(String, f64)> = keywords
                .iter()
                .map(|(k, v)| ((*k).to_owned(), *v))
                .collect();
            MatchFunction::call(name, positional, &keywords).unwrap_err()
        };
        assert_eq!(call("often", &[], &[]), "`often` is not a match function");
        assert_eq!(call("lt", &[], &[]), "`lt` needs its argument `end`");
        assert_eq!(
            call("lt", &[1.0, 2.0], &[]),
            "`lt` takes at most 1 argument(s) (end)"
        );
        assert_eq!(
            call("every", &[3.0], &[("stop", 1.0)]),
            "`every` has no argument `stop` (its arguments: modulo, start, end)"
        );
        assert_eq!(
            call("every", &[3.0], &[("modulo", 2.0)]),
            "`every`'s argument `modulo` given twice"
        );
        assert_eq!(
            call("throttle", &[0.0], &[]),
            "`throttle`'s period must be above 0, not 0"
        );
    }

    #[test]
    fn values_that_are_not_numbers_match_no_function() {
        let lt = Matching::new(&Condition::Matches(MatchFunction::Lt(5.0)));
        assert!(lt.matches(&Value::F64(4.5)));
        assert!(lt.matches(&Value::U64(4)));
        assert!(!lt.matches(&Value::from("4")));
        assert!(!lt.matches(&Value::Bool(true)));
    }
}
