//! What a parsed selector is made of: its functions, their captures, and the error of a
//! malformed one.

use super::condition::Condition;

/// What a capture does in its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Captured with the focus: its latest value is a field of each event.
    Context,
    /// `!x`: each assignment of `x` gives an event.
    Focus,
    /// `!!x`: the end of a wrapper probe whose `!` marks the beginning.
    End,
}

/// The name of a capture that stands for every variable of its function (`*`, `$x`, `:Tag`).
pub const ANY: &str = "*";

/// One variable a selector names in a function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The variable, a special (`#value`), or [`ANY`] (`*`) for every argument and binding.
    pub name: String,
    /// The field it is given as (`as` renames it). For `*` without `as`: [`ANY`], meaning
    /// each variable gives its own name.
    pub key: String,
    /// Focus, end of a wrapper, or context.
    pub role: Role,
    /// 1-based column of the capture in the selector (of its `!` or `!!` if it has one).
    pub column: usize,
    /// `x:Tag`: only a variable whose type is named `Tag` (the last segment of its type's path,
    /// generics aside: `Tensor` for `Tensor<B, 2>` and `&Tensor<B, 2>`).
    pub tag: Option<String>,
    /// `x=1`: only while the variable has this value; `i~every(3)`: only while a match
    /// function accepts it.
    pub condition: Option<Condition>,
}

impl Capture {
    /// Whether it stands for every variable (`*`, `$x`, `:Tag`) rather than one by name.
    pub fn is_any(&self) -> bool {
        self.name == ANY
    }
}

/// One function of a selector and what it captures there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// `f`, `Type::method`, `crate::module::f`; `["*"]` for any instrumented function.
    pub path: Vec<String>,
    /// What is captured in this function.
    pub captures: Vec<Capture>,
    /// 1-based column of the path.
    pub column: usize,
}

impl Element {
    /// The path as written: `a::b::f`, or `*`.
    pub fn name(&self) -> String {
        self.path.join("::")
    }

    /// Whether it stands for any instrumented function (`*(x) > y`, or a selector that names
    /// only a variable, `loss`).
    pub fn is_any(&self) -> bool {
        self.path.len() == 1 && self.path[0] == ANY
    }
}

/// A malformed selector: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("selector `{selector}`, column {column}: expected {expected}, found {found}")]
pub struct SelectorError {
    /// The selector as written.
    pub selector: String,
    /// 1-based column (in characters) of the problem.
    pub column: usize,
    /// What the grammar allows there.
    pub expected: String,
    /// What is there instead.
    pub found: String,
}
