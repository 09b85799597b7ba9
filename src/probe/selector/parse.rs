//! The grammar: tokens to [`Element`]s, every error at a column with what was expected there.

use super::ast::{ANY, Capture, Element, Role, SelectorError};
use super::condition::{Condition, MatchFunction};
use super::lex::{Token, is_name_start, tokenize};
use super::literal::Literal;

const SPECIALS: &str = "#enter, #exit, #value, #error, #loop_NAME or #endloop_NAME";
const CAPTURE: &str = "a variable name, `!`, `!!` or a special (#value, …)";

/// Whether `#name` is a special ptera knows.
fn is_special(name: &str) -> bool {
    matches!(name, "enter" | "exit" | "value" | "error")
        || name
            .strip_prefix("loop_")
            .or_else(|| name.strip_prefix("endloop_"))
            .is_some_and(|x| x.chars().next().is_some_and(is_name_start))
}

/// What a segment starts with.
enum Head {
    /// `f`, `a::b`, `/a.b/f`, `//f` (`slashed`: only a function can be written so).
    Path { path: Vec<String>, slashed: bool },
    /// `*`, or nothing before `:Tag`.
    Star,
    /// `$x`: any variable, given as `x`.
    Dollar(String),
    /// `#value` (with its `#`).
    Special(String),
}

/// A call's parentheses: its captures, and the functions of one nested call (`f(g(x))`),
/// outermost first.
struct Call {
    captures: Vec<Capture>,
    nested: Vec<Element>,
}

/// A segment before it is known to be a function or a variable.
struct Raw {
    head: Head,
    call: Option<Call>,
    tag: Option<(String, usize)>,
    rename: Option<(String, usize)>,
    /// `as !x` / `as !!x` (ptera's `f(!n) as !!v`): the renamed capture's role.
    rename_role: Option<Role>,
    condition: Option<(Condition, usize)>,
    column: usize,
}

pub(super) struct Parser<'a> {
    text: &'a str,
    tokens: Vec<(Token, usize)>,
    at: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str) -> Self {
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

    /// `name ((:: | . | /) name)*`; `/` only in a slashed path.
    fn path(&mut self, first: String, slashed: bool) -> Result<Vec<String>, SelectorError> {
        let mut path = vec![first];
        loop {
            match self.peek() {
                Token::PathSep => {}
                Token::Slash if slashed => {}
                _ => return Ok(path),
            }
            let separator = self.bump().0;
            let expected = if separator == Token::Slash {
                "a name after `/`"
            } else {
                "a name after `::`"
            };
            path.push(self.name(expected)?.0);
        }
    }

    fn keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Token::Name(n) if n == word)
    }

    pub(super) fn selector(mut self) -> Result<Vec<Element>, SelectorError> {
        let mut raw = Vec::new();
        self.chain(&mut raw, false)?;
        self.finish(raw)
    }

    /// Segments joined by `>`, up to the end of the selector or, inside grouping parentheses
    /// (`grouped`), up to the `)` that closes them (left for the caller).
    fn chain(&mut self, raw: &mut Vec<Raw>, grouped: bool) -> Result<(), SelectorError> {
        let mut several = self.item(raw)?;
        loop {
            match self.peek() {
                Token::Gt if several => {
                    // ptera nests `>` to the right: `a > (b > c)` is `a > b > c`, but
                    // `(a > b) > c` makes `c` a second capture of `a`, beside `b`.
                    return Err(self.expected(
                        "the end or `)` after a parenthesised chain (ptera reads `(a > b) > c` as \
                         `a(!b, !c)`, not `a > b > c`)",
                    ));
                }
                Token::Gt => {
                    self.bump();
                    several = self.item(raw)?;
                }
                Token::GtGt => {
                    // ptera 1.4's grammar has no `>>` (its action is a commented-out legacy).
                    return Err(self.expected(
                        "`>` (ptera 1.4 has no `>>`: `>` already means called within, at any depth)",
                    ));
                }
                Token::End if !grouped => return Ok(()),
                Token::Close if grouped => return Ok(()),
                _ => {
                    let close = if grouped {
                        "`)`"
                    } else {
                        "the end of the selector"
                    };
                    let expected = if raw.last().is_some_and(|r| r.call.is_some()) {
                        format!("`>` or {close}")
                    } else {
                        format!("`>`, `(`, `as` or {close}")
                    };
                    return Err(self.expected(&expected));
                }
            }
        }
    }

    /// A segment, or a chain in grouping parentheses (ptera's `(apple)` is `apple`, and
    /// `a > (b > c)` is `a > b > c`). Whether it was a group of several segments.
    fn item(&mut self, raw: &mut Vec<Raw>) -> Result<bool, SelectorError> {
        if *self.peek() == Token::Open {
            self.bump();
            let before = raw.len();
            self.chain(raw, true)?;
            self.bump();
            return Ok(raw.len() - before > 1);
        }
        raw.push(self.segment(false)?);
        Ok(false)
    }

    /// One segment: a head, then its call, tag, renaming and condition, each optional.
    fn segment(&mut self, in_call: bool) -> Result<Raw, SelectorError> {
        let column = self.column();
        let head = match self.peek().clone() {
            Token::Special(name) => {
                if !is_special(&name) {
                    return Err(self.error_at(column, SPECIALS, format!("`#{name}`")));
                }
                self.bump();
                Head::Special(format!("#{name}"))
            }
            Token::Dollar => {
                self.bump();
                Head::Dollar(self.name("a variable name after `$`")?.0)
            }
            Token::Star => {
                self.bump();
                Head::Star
            }
            Token::Colon => Head::Star,
            Token::Slash | Token::SlashSlash => {
                self.bump();
                let (first, _) = self.name("a module or function name after `/`")?;
                Head::Path {
                    path: self.path(first, true)?,
                    slashed: true,
                }
            }
            Token::Name(name) if name != "as" => {
                self.bump();
                Head::Path {
                    path: self.path(name, false)?,
                    slashed: false,
                }
            }
            _ => {
                return Err(self.expected(if in_call {
                    CAPTURE
                } else {
                    "a variable or function name"
                }));
            }
        };
        let call = match (&head, self.peek()) {
            (Head::Path { .. } | Head::Star, Token::Open) => {
                self.bump();
                Some(self.captures()?)
            }
            _ => None,
        };
        let tag = if *self.peek() == Token::Colon {
            let (_, at) = self.bump();
            // ptera's `x:@Tag` names the tag `Tag` (`ptera.tag.Tag`) as `x:Tag` does once
            // `Tag` is imported: here both name the type `Tag`.
            if *self.peek() == Token::At {
                let (_, at_sign) = self.bump();
                // ptera tags its `#enter`/`#exit` specials `@enter`/`@exit`; here a special is
                // named, not tagged.
                if let Token::Name(name) = self.peek()
                    && (name == "enter" || name == "exit")
                {
                    return Err(self.error_at(
                        at_sign,
                        "a type's name (ptera's `@enter`/`@exit` tags: name `#enter`/`#exit`)",
                        format!("`@{name}`"),
                    ));
                }
            }
            let (first, _) = self.name("a tag (a type name) after `:`")?;
            let path = self.path(first, false)?;
            Some((path.last().cloned().unwrap_or_default(), at))
        } else {
            None
        };
        let mut rename_role = None;
        let rename = if self.keyword("as") {
            // The column of `as`, where an error about the renaming points.
            let (_, at) = self.bump();
            rename_role = match self.peek() {
                Token::Bang => Some(Role::Focus),
                Token::BangBang => Some(Role::End),
                _ => None,
            };
            if rename_role.is_some() {
                self.bump();
            }
            let (key, _) = self.name("a field name after `as`")?;
            Some((key, at))
        } else {
            None
        };
        let condition = match self.peek() {
            Token::Eq => {
                let (_, at) = self.bump();
                Some((Condition::Equals(self.literal()?), at))
            }
            Token::Tilde => {
                let (_, at) = self.bump();
                Some((Condition::Matches(self.match_function()?), at))
            }
            _ => None,
        };
        Ok(Raw {
            head,
            call,
            tag,
            rename,
            rename_role,
            condition,
            column,
        })
    }

    fn literal(&mut self) -> Result<Literal, SelectorError> {
        const EXPECTED: &str = "a value after `=`: a number, a quoted string, true, false or None";
        let column = self.column();
        let literal = match self.peek().clone() {
            Token::Number(text) => {
                let parsed = if text.contains(['.', 'e', 'E']) {
                    text.parse().ok().map(Literal::Float)
                } else {
                    text.parse().ok().map(Literal::Int)
                };
                parsed.ok_or_else(|| {
                    self.error_at(column, "a number that fits in 64 bits", format!("`{text}`"))
                })?
            }
            Token::Str(text) => Literal::Str(text),
            Token::Name(n) if matches!(n.as_str(), "true" | "True") => Literal::Bool(true),
            Token::Name(n) if matches!(n.as_str(), "false" | "False") => Literal::Bool(false),
            Token::Name(n) if matches!(n.as_str(), "None" | "null") => Literal::Null,
            _ => return Err(self.expected(EXPECTED)),
        };
        self.bump();
        Ok(literal)
    }

    /// A match function after `~`: ptera's `every(3, start=5)`, with numbers for arguments.
    fn match_function(&mut self) -> Result<MatchFunction, SelectorError> {
        let expected = format!(
            "a match function after `~`: {}",
            MatchFunction::NAMES.join(", ")
        );
        let column = self.column();
        let name = match self.peek().clone() {
            Token::Name(name) if MatchFunction::NAMES.contains(&name.as_str()) => name,
            _ => return Err(self.expected(&expected)),
        };
        self.bump();
        if *self.peek() != Token::Open {
            return Err(self.expected(&format!("`(` after `{name}`")));
        }
        self.bump();
        let (mut positional, mut keywords) = (Vec::new(), Vec::new());
        while *self.peek() != Token::Close {
            if !(positional.is_empty() && keywords.is_empty()) {
                if *self.peek() != Token::Comma {
                    return Err(self.expected("`,` or `)` between a match function's arguments"));
                }
                self.bump();
            }
            let keyword = match self.peek().clone() {
                Token::Name(key) => {
                    self.bump();
                    if *self.peek() != Token::Eq {
                        return Err(self.expected(&format!("`=` after `{key}`")));
                    }
                    self.bump();
                    Some(key)
                }
                _ => None,
            };
            if keyword.is_none() && !keywords.is_empty() {
                return Err(self.expected(
                    "a keyword argument (`name=number`): a positional one cannot follow it",
                ));
            }
            let number = self.number("a number as a match function's argument")?;
            match keyword {
                Some(key) => keywords.push((key, number)),
                None => positional.push(number),
            }
        }
        self.bump();
        MatchFunction::call(&name, &positional, &keywords)
            .map_err(|problem| self.error_at(column, "a match function's arguments", problem))
    }

    /// A number (integer or float), as a match function's argument.
    fn number(&mut self, expected: &str) -> Result<f64, SelectorError> {
        let Token::Number(text) = self.peek().clone() else {
            return Err(self.expected(expected));
        };
        let column = self.column();
        let number = text
            .parse::<f64>()
            .map_err(|_| self.error_at(column, expected, format!("`{text}`")))?;
        self.bump();
        Ok(number)
    }

    fn captures(&mut self) -> Result<Call, SelectorError> {
        let mut call = Call {
            captures: Vec::new(),
            nested: Vec::new(),
        };
        if *self.peek() == Token::Close {
            self.bump();
            return Ok(call);
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
            let raw = self.segment(true)?;
            if raw.call.is_some() && role == Role::Context {
                if !call.nested.is_empty() {
                    return Err(self.error_at(
                        raw.column,
                        "one nested call per function (ptera's sibling calls, `f(g(x), h(y))`, \
                         are not supported)",
                        "a second one".into(),
                    ));
                }
                call.nested = self.function(raw, true)?;
            } else {
                call.captures.push(self.capture(raw, role, start)?);
            }
            match self.peek() {
                Token::Comma => {
                    self.bump();
                }
                Token::Close => {
                    self.bump();
                    return Ok(call);
                }
                _ => return Err(self.expected("`,`, `as` or `)`")),
            }
        }
    }

    /// A segment as a variable.
    fn capture(&self, raw: Raw, role: Role, column: usize) -> Result<Capture, SelectorError> {
        let (name, default_key) = match raw.head {
            Head::Special(special) => {
                if let Some((_, at)) = raw.tag {
                    return Err(self.error_at(
                        at,
                        "a tag on a variable (specials have none)",
                        format!("a tag on `{special}`"),
                    ));
                }
                (special.clone(), special)
            }
            Head::Star => (ANY.to_owned(), ANY.to_owned()),
            Head::Dollar(key) => (ANY.to_owned(), key),
            Head::Path { path, slashed } => {
                if path.len() != 1 || slashed || raw.call.is_some() {
                    let written = if slashed {
                        format!("`/{}`", path.join("/"))
                    } else {
                        format!("`{}`", path.join("::"))
                    };
                    return Err(self.error_at(
                        raw.column,
                        "a variable name (no `::`) or `(` after the last function",
                        written,
                    ));
                }
                let name = path.into_iter().next().unwrap_or_default();
                (name.clone(), name)
            }
        };
        if name == ANY
            && let Some((condition, at)) = &raw.condition
        {
            let (sign, found) = match condition {
                Condition::Equals(_) => ("=", "`*=`"),
                Condition::Matches(_) => ("~", "`*~`"),
            };
            return Err(self.error_at(
                *at,
                &format!(
                    "a named variable before `{sign}` (a condition on `*` would hold for \
                     whichever variable has the value)"
                ),
                found.into(),
            ));
        }
        Ok(Capture {
            name,
            key: raw.rename.map(|(k, _)| k).unwrap_or(default_key),
            role: raw.rename_role.unwrap_or(role),
            column,
            tag: raw.tag.map(|(t, _)| t),
            condition: raw.condition.map(|(c, _)| c),
        })
    }

    /// A segment as a function, followed by the functions of its nested call: `f(a) as x`
    /// captures `#value` as `x` (the focus when `focus_value`), `f(a) = 3` only while its
    /// `#value` is 3.
    fn function(&self, raw: Raw, focus_value: bool) -> Result<Vec<Element>, SelectorError> {
        if let Some((_, at)) = raw.tag {
            return Err(self.error_at(
                at,
                "a tag on a variable (ptera's function categories, `f:Tag`, are not supported)",
                "a tag on a function".into(),
            ));
        }
        let path = match raw.head {
            Head::Path { path, .. } => path,
            Head::Star => vec![ANY.to_owned()],
            Head::Special(name) | Head::Dollar(name) => {
                return Err(self.error_at(
                    raw.column,
                    "a function name before `>`",
                    format!("`{name}`"),
                ));
            }
        };
        let Call {
            mut captures,
            nested,
        } = raw.call.unwrap_or(Call {
            captures: Vec::new(),
            nested: Vec::new(),
        });
        // `f() as x` gives `#value` (ptera's sugar); `f() = 3` only filters on it.
        if raw.rename.is_some() || raw.condition.is_some() {
            let column = raw
                .rename
                .as_ref()
                .map(|r| r.1)
                .or(raw.condition.as_ref().map(|c| c.1))
                .unwrap_or(raw.column);
            let role = match raw.rename_role {
                Some(role) => role,
                None if focus_value && raw.rename.is_some() => Role::Focus,
                None => Role::Context,
            };
            captures.push(Capture {
                name: "#value".into(),
                key: raw
                    .rename
                    .map(|(k, _)| k)
                    .unwrap_or_else(|| "#value".into()),
                role,
                column,
                tag: None,
                condition: raw.condition.map(|(c, _)| c),
            });
        }
        let mut elements = vec![Element {
            path,
            captures,
            column: raw.column,
        }];
        elements.extend(nested);
        Ok(elements)
    }

    /// Turns the segments into functions: a last segment without parentheses is the focus
    /// variable of the function before it (of any function when it is alone).
    fn finish(&self, mut raw: Vec<Raw>) -> Result<Vec<Element>, SelectorError> {
        let last = raw.pop().expect("at least one segment was parsed");
        let mut elements = Vec::with_capacity(raw.len() + 1);
        for r in raw {
            if r.call.as_ref().is_some_and(|c| !c.nested.is_empty()) {
                return Err(self.error_at(
                    r.column,
                    "a nested call (`f(g(x))`) only in the last function",
                    "more after it".into(),
                ));
            }
            if matches!(r.head, Head::Path { .. } | Head::Star) && r.call.is_none() {
                if let Some((_, column)) = &r.rename {
                    return Err(self.error_at(
                        *column,
                        "`as` only after a variable (a function cannot be renamed)",
                        "a renamed function".into(),
                    ));
                }
                if let Some((_, column)) = r.condition.as_ref().map(|c| ((), c.1)) {
                    return Err(self.error_at(
                        column,
                        "a condition on a variable, or on `#value` after parentheses \
                         (`f() = 3`)",
                        "a condition on a function".into(),
                    ));
                }
            }
            elements.extend(self.function(r, false)?);
        }
        let is_variable = last.call.is_none()
            && !matches!(&last.head, Head::Path { path, slashed } if *slashed || path.len() > 1);
        if is_variable {
            let mut function = match elements.pop() {
                Some(function) => function,
                // `x` alone: the variable in any instrumented function, as ptera's `*(!x)`.
                None => Element {
                    path: vec![ANY.to_owned()],
                    captures: Vec::new(),
                    column: last.column,
                },
            };
            let column = last.column;
            let focus = self.capture(last, Role::Focus, column)?;
            if function.captures.iter().any(|c| c.role != Role::Context) {
                return Err(self.error_at(
                    column,
                    "the end of the selector: the function already has a focus (`!`)",
                    format!("the variable `{}`", focus.name),
                ));
            }
            function.captures.push(focus);
            elements.push(function);
        } else if last.call.is_some() {
            elements.extend(self.function(last, true)?);
        } else if elements.is_empty() {
            return Err(self.error_at(
                self.text.chars().count() + 1,
                "`>` and a variable, or `(` with captures, after the function name",
                "the end".into(),
            ));
        } else {
            // `f > a::b`: a path where a variable belongs.
            self.capture(last, Role::Focus, 0)?;
        }
        self.check_roles(&elements)?;
        Ok(elements)
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
