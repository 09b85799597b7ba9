//! Why a probe could not be opened or could not override.

use super::selector::SelectorError;

/// Why a probe could not be opened or could not override.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// The selector is malformed.
    #[error(transparent)]
    Selector(#[from] SelectorError),
    /// No instrumented function has this name.
    #[error(
        "no function instrumented with #[probe] is named `{name}` (column {column}){}",
        suggestions(closest)
    )]
    UnknownFunction {
        /// The name in the selector.
        name: String,
        /// Its column in the selector.
        column: usize,
        /// The instrumented functions with the closest names.
        closest: Vec<String>,
    },
    /// The function has no variable of this name.
    #[error(
        "`{function}` has no variable `{variable}` (column {column}); it has: {}",
        available.join(", ")
    )]
    UnknownVariable {
        /// The function in the selector.
        function: String,
        /// The variable in the selector.
        variable: String,
        /// Its column in the selector.
        column: usize,
        /// The variables and specials the function has.
        available: Vec<String>,
    },
    /// The variable's type, as written in the source, is not the selector's tag (`x:Tag`).
    #[error(
        "`{variable}` in `{function}` is written `{written}`, not tagged `{tag}` (column {column}): \
         a tag names the variable's type"
    )]
    WrongTag {
        /// The function in the selector.
        function: String,
        /// The variable in the selector.
        variable: String,
        /// The tag in the selector.
        tag: String,
        /// The variable's type as written.
        written: String,
        /// The variable's column in the selector.
        column: usize,
    },
    /// A variable without its function (`x`, `*(x)`) that no instrumented function has.
    #[error(
        "no function instrumented with #[probe] has a variable `{variable}` (column {column}){}",
        if *is_function {
            format!("; `{variable}` is a function: select one of its variables (`{variable} > x`) or capture some (`{variable}(x, y)`)")
        } else if closest.is_empty() {
            String::new()
        } else {
            format!("; closest: {}", closest.join(", "))
        }
    )]
    NoFunctionHas {
        /// The variable in the selector.
        variable: String,
        /// Its column in the selector.
        column: usize,
        /// The variables of instrumented functions with the closest names.
        closest: Vec<String>,
        /// Whether an instrumented function has that name: the selector forgot its variable.
        is_function: bool,
    },
    /// `override_with` on a selector with no focus variable.
    #[error("cannot override with `{selector}`: it has no focus variable (`f > x` or `f(!x)`)")]
    OverrideWithoutFocus {
        /// The selector.
        selector: String,
    },
    /// `override_with` on a variable that is not marked overridable.
    #[error(
        "`{variable}` in `{function}` is not overridable: mark it `#[probe(overridable({variable}))]`{}",
        if overridable.is_empty() { String::new() } else { format!(" (overridable there: {})", overridable.join(", ")) }
    )]
    NotOverridable {
        /// The function.
        function: String,
        /// The focus variable.
        variable: String,
        /// The variables of the function that are overridable.
        overridable: Vec<String>,
    },
    /// The override takes another type than the variable has.
    #[error(
        "cannot override `{variable}` in `{function}` with a function of `{expected}`: the variable is a `{found}`"
    )]
    OverrideType {
        /// The function.
        function: String,
        /// The variable.
        variable: String,
        /// The type the override takes.
        expected: &'static str,
        /// The variable's type.
        found: &'static str,
    },
}

fn suggestions(closest: &[String]) -> String {
    if closest.is_empty() {
        "; no function is instrumented in this program".to_owned()
    } else {
        format!("; closest: {}", closest.join(", "))
    }
}
