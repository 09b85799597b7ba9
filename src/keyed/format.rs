use std::fmt::Write as _;

use super::KeyedOp;
use crate::{Event, Value};

/// A template that [`format`](super::EventStreamOps::format) fills with an event's fields, parsed
/// once when the operator is built.
///
/// `{loss}` is replaced by the field `loss`; `{loss:.3}` sets a precision, `{loss:>8.3}` also a
/// width and alignment (`<`, `^`, `>`, with an optional fill character before it: `{step:0>5}`);
/// `{}` is the whole event (`loss=0.25 step=3`); `{{` and `}}` are literal braces.
///
/// ```
/// use giving::{Event, Template};
///
/// let template = Template::parse("step {step:>4}: loss {loss:.3}").unwrap();
/// let event = Event::builder().field("step", 7u64).field("loss", 0.123456).build();
/// assert_eq!(template.render(&event).unwrap(), "step    7: loss 0.123");
/// assert!(Template::parse("{loss").is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    WholeEvent,
    Field { key: String, spec: Spec },
}

#[derive(Debug, Clone, Default)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    width: usize,
    precision: Option<usize>,
}

/// Why a [`Template`] could not be parsed: the template and the byte offset of the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid format template {template:?} at byte {at}: {problem}")]
pub struct TemplateError {
    /// The template as given.
    pub template: String,
    /// Byte offset of the problem in the template.
    pub at: usize,
    /// What is wrong there.
    pub problem: &'static str,
}

impl Template {
    /// Parses `template`; the error names the position of the first problem.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let error = |at, problem| TemplateError {
            template: template.to_owned(),
            at,
            problem,
        };
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut chars = template.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '{' if chars.peek().is_some_and(|&(_, next)| next == '{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek().is_some_and(|&(_, next)| next == '}') => {
                    chars.next();
                    text.push('}');
                }
                '}' => return Err(error(at, "unmatched `}` (write `}}` for a literal brace)")),
                '{' => {
                    let rest = &template[at + 1..];
                    let len = rest.find('}').ok_or_else(|| error(at, "unclosed `{`"))?;
                    let inside = &rest[..len];
                    for _ in 0..inside.chars().count() + 1 {
                        chars.next();
                    }
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    let (key, spec) = inside.split_once(':').unwrap_or((inside, ""));
                    if key.contains('{') {
                        return Err(error(at, "`{` inside a placeholder"));
                    }
                    let spec = Spec::parse(spec).ok_or_else(|| {
                        error(
                            at,
                            "bad format spec (expected [[fill]align][width][.precision])",
                        )
                    })?;
                    parts.push(if key.is_empty() {
                        Part::WholeEvent
                    } else {
                        Part::Field {
                            key: key.trim().to_owned(),
                            spec,
                        }
                    });
                }
                c => text.push(c),
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Self { parts })
    }

    /// The text for `event`, or `None` if a field the template names is missing.
    pub fn render(&self, event: &Event) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::WholeEvent => {
                    let _ = write!(out, "{event}");
                }
                Part::Field { key, spec } => spec.write(&mut out, event.get(key)?),
            }
        }
        Some(out)
    }
}

impl Spec {
    fn parse(spec: &str) -> Option<Spec> {
        let mut out = Spec::default();
        let chars: Vec<char> = spec.chars().collect();
        let is_align = |c: &char| matches!(c, '<' | '^' | '>');
        let mut i = 0;
        if chars.len() >= 2 && is_align(&chars[1]) {
            out.fill = Some(chars[0]);
            out.align = Some(chars[1]);
            i = 2;
        } else if chars.first().is_some_and(is_align) {
            out.align = Some(chars[0]);
            i = 1;
        }
        let rest: String = chars[i..].iter().collect();
        let (width, precision) = match rest.split_once('.') {
            Some((width, precision)) => (width, Some(precision.parse().ok()?)),
            None => (rest.as_str(), None),
        };
        out.width = if width.is_empty() {
            0
        } else {
            width.parse().ok()?
        };
        out.precision = precision;
        Some(out)
    }

    fn write(&self, out: &mut String, value: &Value) {
        let text = match self.precision {
            Some(precision) => format!("{value:.precision$}"),
            None => value.to_string(),
        };
        let len = text.chars().count();
        let pad = self.width.saturating_sub(len);
        let fill = self.fill.unwrap_or(' ');
        let numeric = matches!(
            value.resolved(),
            Ok(Value::I64(_) | Value::U64(_) | Value::F64(_))
        );
        let align = self.align.unwrap_or(if numeric { '>' } else { '<' });
        let (before, after) = match align {
            '>' => (pad, 0),
            '^' => (pad / 2, pad - pad / 2),
            _ => (0, pad),
        };
        out.extend(std::iter::repeat_n(fill, before));
        out.push_str(&text);
        out.extend(std::iter::repeat_n(fill, after));
    }
}

/// Operator of [`format`](super::EventStreamOps::format).
#[derive(Debug, Clone)]
pub struct Format {
    template: Template,
}

impl Format {
    pub(crate) fn new(template: Template) -> Self {
        Self { template }
    }
}

impl KeyedOp<Event> for Format {
    type Out = String;

    fn apply(&mut self, event: Event) -> Option<String> {
        self.template.render(&event)
    }
}
