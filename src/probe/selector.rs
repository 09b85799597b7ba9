//! ptera's selector grammar, parsed at run time, with errors that point at the column.
//!
//! The [`Selector`] API lives here; what it is made of in `ast`, the tokens in `lex`, the
//! grammar in `parse`, a condition's value in `literal`, the match functions in `condition`.

use std::fmt;

mod ast;
mod condition;
mod lex;
mod literal;
mod parse;

pub use ast::{ANY, Capture, Element, Role, SelectorError};
pub(crate) use condition::Matching;
pub use condition::{Condition, MatchFunction};
pub use literal::Literal;

/// A parsed selector: the functions from the outermost call to the one holding the focus.
///
/// The grammar is ptera's (docs/probes.md has one example per form, and what ptera has that
/// this does not):
///
/// ```text
/// selector := item (">" item)*
/// item     := segment | "(" selector ")"                      (grouping: `(a)` is `a`)
/// segment  := function | variable                              (a variable: last only)
/// function := fpath ("(" [capture ("," capture)*] ")")? ("as" name)? condition?
/// fpath    := path | "*" | "/" path ("/" name)* | "//" name ("/" name)*
/// capture  := ("!" | "!!")? variable | function                 (one nested function)
/// variable := (name | special | "*" | "$" name | ε) (":" Tag)? ("as" name)? condition?
/// condition := "=" literal | "~" match
/// path     := name (("::" | ".") name)*
/// special  := "#enter" | "#exit" | "#value" | "#error" | "#loop_" name | "#endloop_" name
/// literal  := number | 'string' | "string" | true | false | None
/// match    := name "(" [argument ("," argument)*] ")"         (ptera.tools: every, between,
/// argument := number | name "=" number                          lt, lte, gt, gte, throttle)
/// ```
///
/// `f > x` is `f(!x)`; `x` alone is `*(!x)` (any function); `>` means "called within, at any
/// depth", as in ptera 1.4 (which has no `>>`); a function without a focus (`f(a, b)`) gives one
/// event when it returns; `!!x` ends a wrapper probe begun by `!y`; `f() as x` is
/// `f(!#value as x)`; `f(a(b))` is `f > a(b)`; `$x` is `* as x`.
///
/// ```
/// use giving::probe::{Condition, Literal, Role, Selector};
///
/// let s = Selector::parse("train(epoch=1) > step > loss as l").unwrap();
/// assert_eq!(s.elements().len(), 2);
/// assert_eq!(
///     s.elements()[0].captures[0].condition,
///     Some(Condition::Equals(Literal::Int(1)))
/// );
/// let focus = s.focus().unwrap();
/// assert_eq!((focus.name.as_str(), focus.key.as_str(), focus.role), ("loss", "l", Role::Focus));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    text: String,
    elements: Vec<Element>,
}

impl Selector {
    /// Parses `text`; an error names the column and what was expected there.
    ///
    /// ```
    /// let error = giving::probe::Selector::parse("f > ").unwrap_err();
    /// assert_eq!(error.column, 5);
    /// assert_eq!(
    ///     error.to_string(),
    ///     "selector `f > `, column 5: expected a variable or function name, found the end"
    /// );
    /// ```
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let elements = parse::Parser::new(text).selector()?;
        Ok(Selector {
            text: text.to_owned(),
            elements,
        })
    }

    /// The selector as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The functions, outermost first; the last one holds the focus.
    pub fn elements(&self) -> &[Element] {
        &self.elements
    }

    /// The focus (`!x`, or the variable after the last `>`): what triggers an event. `None` for
    /// a selector without one (`f(a, b)`), which gives one event when `f` returns.
    pub fn focus(&self) -> Option<&Capture> {
        self.last().captures.iter().find(|c| c.role == Role::Focus)
    }

    /// The end of a wrapper probe (`!!x`), if any.
    pub fn end(&self) -> Option<&Capture> {
        self.last().captures.iter().find(|c| c.role == Role::End)
    }

    fn last(&self) -> &Element {
        self.elements
            .last()
            .expect("a parsed selector has at least one element")
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
