//! ptera's selector grammar, parsed at run time, with errors that point at the column.
//!
//! ```text
//! selector := element ((">" | ">>") element)*
//! element  := path ("(" [capture ("," capture)*] ")")?      a function
//!           | name ("as" name)? | special ("as" name)?         a variable (last element only)
//! capture  := ("!" | "!!")? (name | special) ("as" name)?
//! path     := name ("::" name)*
//! special  := "#enter" | "#exit" | "#value" | "#error" | "#loop_" name | "#endloop_" name
//! ```

use std::fmt;

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

/// One variable a selector names in a function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The variable, or a special (`#value`).
    pub name: String,
    /// The field it is given as (`as` renames it).
    pub key: String,
    /// Focus, end of a wrapper, or context.
    pub role: Role,
    /// 1-based column of the capture in the selector (of its `!` or `!!` if it has one).
    pub column: usize,
}

/// One function of a selector and what it captures there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// `f`, `Type::method`, `crate::module::f`.
    pub path: Vec<String>,
    /// What is captured in this function.
    pub captures: Vec<Capture>,
    /// 1-based column of the path.
    pub column: usize,
}

impl Element {
    /// The path as written: `a::b::f`.
    pub fn name(&self) -> String {
        self.path.join("::")
    }
}

/// A parsed selector: the functions from the outermost call to the one holding the focus.
///
/// The grammar is ptera's (docs/probes.md has one example per form):
///
/// ```text
/// selector := element ((">" | ">>") element)*
/// element  := path ("(" [capture ("," capture)*] ")")?      a function
///           | name ("as" name)? | special ("as" name)?         a variable (last element only)
/// capture  := ("!" | "!!")? (name | special) ("as" name)?
/// path     := name ("::" name)*
/// special  := "#enter" | "#exit" | "#value" | "#error" | "#loop_" name | "#endloop_" name
/// ```
///
/// `f > x` is `f(!x)`; `>` and `>>` both mean "called within, at any depth"; a function without
/// a focus (`f(a, b)`) gives one event when it returns; `!!x` ends a wrapper probe begun by
/// `!y`.
///
/// ```
/// use giving::probe::{Role, Selector};
///
/// let s = Selector::parse("train(epoch) > step > loss as l").unwrap();
/// assert_eq!(s.elements().len(), 2);
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
        Parser::new(text).selector()
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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    Special(String),
    PathSep,
    Gt,
    GtGt,
    Open,
    Close,
    Comma,
    Bang,
    BangBang,
    End,
    Invalid(char),
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Name(n) => format!("`{n}`"),
            Token::Special(s) => format!("`#{s}`"),
            Token::PathSep => "`::`".into(),
            Token::Gt => "`>`".into(),
            Token::GtGt => "`>>`".into(),
            Token::Open => "`(`".into(),
            Token::Close => "`)`".into(),
            Token::Comma => "`,`".into(),
            Token::Bang => "`!`".into(),
            Token::BangBang => "`!!`".into(),
            Token::End => "the end".into(),
            Token::Invalid(c) => format!("`{c}`"),
        }
    }
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The tokens of `text` with their 1-based columns.
fn tokenize(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        let next = chars.get(i + 1).copied();
        let (token, len) = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            ':' if next == Some(':') => (Token::PathSep, 2),
            '>' if next == Some('>') => (Token::GtGt, 2),
            '>' => (Token::Gt, 1),
            '(' => (Token::Open, 1),
            ')' => (Token::Close, 1),
            ',' => (Token::Comma, 1),
            '!' if next == Some('!') => (Token::BangBang, 2),
            '!' => (Token::Bang, 1),
            '#' if next.is_some_and(is_name_start) => {
                let len = 1 + chars[i + 1..]
                    .iter()
                    .take_while(|c| is_name_char(**c))
                    .count();
                (Token::Special(chars[i + 1..i + len].iter().collect()), len)
            }
            c if is_name_start(c) => {
                let len = chars[i..].iter().take_while(|c| is_name_char(**c)).count();
                (Token::Name(chars[i..i + len].iter().collect()), len)
            }
            other => (Token::Invalid(other), 1),
        };
        tokens.push((token, column));
        i += len;
    }
    tokens.push((Token::End, chars.len() + 1));
    tokens
}

/// Whether `#name` is a special ptera knows.
fn is_special(name: &str) -> bool {
    matches!(name, "enter" | "exit" | "value" | "error")
        || name
            .strip_prefix("loop_")
            .or_else(|| name.strip_prefix("endloop_"))
            .is_some_and(|x| x.chars().next().is_some_and(is_name_start))
}

const SPECIALS: &str = "#enter, #exit, #value, #error, #loop_NAME or #endloop_NAME";

/// A parsed element before the last one is known to be a variable or a function.
struct Raw {
    path: Vec<String>,
    special: Option<String>,
    call: Option<Vec<Capture>>,
    rename: Option<(String, usize)>,
    column: usize,
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<(Token, usize)>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            tokens: tokenize(text),
            at: 0,
        }
    }

    fn peek(&self) -> &Token {
        &self.tokens[self.at].0
    }

    fn column(&self) -> usize {
        self.tokens[self.at].1
    }

    fn bump(&mut self) -> (Token, usize) {
        let token = self.tokens[self.at].clone();
        if self.at + 1 < self.tokens.len() {
            self.at += 1;
        }
        token
    }

    fn error_at(&self, column: usize, expected: &str, found: String) -> SelectorError {
        SelectorError {
            selector: self.text.to_owned(),
            column,
            expected: expected.to_owned(),
            found,
        }
    }

    /// An error at the current token.
    fn expected(&self, expected: &str) -> SelectorError {
        self.error_at(self.column(), expected, self.peek().describe())
    }

    fn name(&mut self, expected: &str) -> Result<(String, usize), SelectorError> {
        match self.peek().clone() {
            Token::Name(name) if name != "as" => {
                let column = self.column();
                self.bump();
                Ok((name, column))
            }
            _ => Err(self.expected(expected)),
        }
    }

    fn special(&mut self) -> Result<Option<(String, usize)>, SelectorError> {
        let Token::Special(name) = self.peek().clone() else {
            return Ok(None);
        };
        let column = self.column();
        if !is_special(&name) {
            return Err(self.error_at(column, SPECIALS, format!("`#{name}`")));
        }
        self.bump();
        Ok(Some((format!("#{name}"), column)))
    }

    fn rename(&mut self) -> Result<Option<(String, usize)>, SelectorError> {
        if *self.peek() != Token::Name("as".into()) {
            return Ok(None);
        }
        // The column of `as`, where an error about the renaming points.
        let (_, column) = self.bump();
        let (key, _) = self.name("a field name after `as`")?;
        Ok(Some((key, column)))
    }

    fn selector(mut self) -> Result<Selector, SelectorError> {
        let mut raw = vec![self.element()?];
        loop {
            match self.peek() {
                Token::Gt | Token::GtGt => {
                    self.bump();
                    raw.push(self.element()?);
                }
                Token::End => break,
                _ => {
                    let expected = if raw.last().is_some_and(|r| r.call.is_some()) {
                        "`>` or the end of the selector"
                    } else {
                        "`>`, `(`, `as` or the end of the selector"
                    };
                    return Err(self.expected(expected));
                }
            }
        }
        self.finish(raw)
    }

    fn element(&mut self) -> Result<Raw, SelectorError> {
        let column = self.column();
        if let Some((special, _)) = self.special()? {
            let rename = self.rename()?;
            return Ok(Raw {
                path: Vec::new(),
                special: Some(special),
                call: None,
                rename,
                column,
            });
        }
        let (first, _) = self.name("a variable or function name")?;
        let mut path = vec![first];
        while *self.peek() == Token::PathSep {
            self.bump();
            path.push(self.name("a name after `::`")?.0);
        }
        let call = if *self.peek() == Token::Open {
            self.bump();
            Some(self.captures()?)
        } else {
            None
        };
        let rename = self.rename()?;
        Ok(Raw {
            path,
            special: None,
            call,
            rename,
            column,
        })
    }

    fn captures(&mut self) -> Result<Vec<Capture>, SelectorError> {
        let mut captures = Vec::new();
        if *self.peek() == Token::Close {
            self.bump();
            return Ok(captures);
        }
        loop {
            let start = self.column();
            let role = match self.peek() {
                Token::Bang => Role::Focus,
                Token::BangBang => Role::End,
                _ => Role::Context,
            };
            if role != Role::Context {
                self.bump();
            }
            let (name, _) = match self.special()? {
                Some(special) => special,
                None => self.name("a variable name, `!`, `!!` or a special (#value, …)")?,
            };
            let key = match self.rename()? {
                Some((key, _)) => key,
                None => name.clone(),
            };
            captures.push(Capture {
                name,
                key,
                role,
                column: start,
            });
            match self.peek() {
                Token::Comma => {
                    self.bump();
                }
                Token::Close => {
                    self.bump();
                    return Ok(captures);
                }
                _ => return Err(self.expected("`,`, `as` or `)`")),
            }
        }
    }

    /// Turns the raw elements into functions: a last element without parentheses is the
    /// focus variable of the function before it.
    fn finish(&self, mut raw: Vec<Raw>) -> Result<Selector, SelectorError> {
        let last = raw.pop().expect("at least one element was parsed");
        let mut elements = Vec::with_capacity(raw.len() + 1);
        for r in raw {
            if let Some(special) = &r.special {
                return Err(self.error_at(
                    r.column,
                    "a function name before `>`",
                    format!("`{special}`"),
                ));
            }
            if let Some((_, column)) = &r.rename {
                return Err(self.error_at(
                    *column,
                    "`as` only after a variable (a function cannot be renamed)",
                    "a renamed function".into(),
                ));
            }
            elements.push(Element {
                path: r.path,
                captures: r.call.unwrap_or_default(),
                column: r.column,
            });
        }
        match last.call {
            Some(captures) => {
                if let Some((_, column)) = &last.rename {
                    return Err(self.error_at(
                        *column,
                        "`as` only after a variable (a function cannot be renamed)",
                        "a renamed function".into(),
                    ));
                }
                elements.push(Element {
                    path: last.path,
                    captures,
                    column: last.column,
                });
            }
            None => {
                let Some(function) = elements.pop() else {
                    return Err(self.error_at(
                        self.text.chars().count() + 1,
                        "`>` and a variable, or `(` with captures, after the function name",
                        "the end".into(),
                    ));
                };
                let name = match (last.special, last.path.as_slice()) {
                    (Some(special), _) => special,
                    (None, [name]) => name.clone(),
                    (None, _) => {
                        return Err(self.error_at(
                            last.column,
                            "a variable name (no `::`) or `(` after the last function",
                            format!("`{}`", last.path.join("::")),
                        ));
                    }
                };
                let mut function = function;
                if function.captures.iter().any(|c| c.role != Role::Context) {
                    return Err(self.error_at(
                        last.column,
                        "the end of the selector: the function already has a focus (`!`)",
                        format!("the variable `{name}`"),
                    ));
                }
                let key = last.rename.map(|(k, _)| k).unwrap_or_else(|| name.clone());
                function.captures.push(Capture {
                    name,
                    key,
                    role: Role::Focus,
                    column: last.column,
                });
                elements.push(function);
            }
        }
        self.check_roles(&elements)?;
        Ok(Selector {
            text: self.text.to_owned(),
            elements,
        })
    }

    /// One focus, in the last function; a `!!` only with a `!`.
    fn check_roles(&self, elements: &[Element]) -> Result<(), SelectorError> {
        let (last, outer) = elements.split_last().expect("at least one element");
        for capture in outer.iter().flat_map(|e| &e.captures) {
            if capture.role != Role::Context {
                return Err(self.error_at(
                    capture.column,
                    "a plain capture: `!` and `!!` belong in the last function",
                    format!("`{}`", capture.name),
                ));
            }
        }
        for role in [Role::Focus, Role::End] {
            if let Some(second) = last.captures.iter().filter(|c| c.role == role).nth(1) {
                return Err(self.error_at(
                    second.column,
                    if role == Role::Focus {
                        "a single focus (`!`) per selector"
                    } else {
                        "a single end (`!!`) per selector"
                    },
                    format!("a second one on `{}`", second.name),
                ));
            }
        }
        if let Some(end) = last.captures.iter().find(|c| c.role == Role::End)
            && !last.captures.iter().any(|c| c.role == Role::Focus)
        {
            return Err(self.error_at(
                end.column,
                "a beginning (`!x`) for the wrapper's end (`!!`)",
                format!("only `!!{}`", end.name),
            ));
        }
        Ok(())
    }
}
