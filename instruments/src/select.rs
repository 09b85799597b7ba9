//! [`KeySelection`]: which keys a sink keeps, as voir's `log(*patterns, context=…)`.
//!
//! A selection is a comma-separated list of shell-style patterns (`*`, `?`, `[abc]`, `[!abc]`,
//! as Python's `fnmatch`):
//!
//! - `loss`, `gpu*`: keys to keep. An event is kept only if one of its keys matches one of
//!   these, as in voir.
//! - `+task`: a *context* key: kept in an event that is kept, but never the reason to keep one
//!   (voir's `context=`).
//! - `!batch`: a key to drop, whatever else matches it. This one is ours: voir has no
//!   exclusion. A selection of exclusions only keeps every other key.

use giving::Event;
use glob::Pattern;

/// A parsed key selection (`"loss,rate,+task,!batch"`); the syntax is in
/// `docs/instruments.md` ("Choosing the keys").
///
/// ```
/// use giving::{Event, Value};
/// use giving_instruments::KeySelection;
///
/// let keys: KeySelection = "loss,gpu*,+task,!gpu_temp".parse().unwrap();
/// let field = |key, value: Value| (key, value);
/// let step = Event::new([field("task", "train".into()), field("step", 3u64.into()), field("loss", 0.5.into())]);
/// let kept = keys.apply(&step).unwrap();
/// assert_eq!(kept.keys().collect::<Vec<_>>(), ["task", "loss"]);
///
/// // Context alone does not keep an event.
/// let progress = Event::new([field("task", "train".into()), field("step", 4u64.into())]);
/// assert!(keys.apply(&progress).is_none());
///
/// let gpu = Event::new([field("gpu_load", 0.9.into()), field("gpu_temp", 61.0.into())]);
/// assert_eq!(keys.apply(&gpu).unwrap().keys().collect::<Vec<_>>(), ["gpu_load"]);
/// ```
#[derive(Debug, Clone)]
pub struct KeySelection {
    text: String,
    keep: Vec<Pattern>,
    context: Vec<Pattern>,
    drop: Vec<Pattern>,
}

/// A selection that cannot be parsed: what is wrong and at which item (from 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key selection item {item} (`{text}`): {message}")]
pub struct SelectionError {
    /// The item's position in the comma-separated list, from 1.
    pub item: usize,
    /// The item as written.
    pub text: String,
    /// What is wrong with it.
    pub message: String,
}

impl KeySelection {
    /// The selection as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The event with only the selected keys, or `None` if no key of it is selected (context
    /// keys do not count). Time and origin are kept; an event whose every key is kept is
    /// returned as it is, without a copy.
    pub fn apply(&self, event: &Event) -> Option<Event> {
        let mut selected = false;
        let mut all = true;
        for key in event.keys() {
            match self.verdict(key) {
                Verdict::Selected => selected = true,
                Verdict::Context => {}
                Verdict::Dropped => all = false,
            }
        }
        if !selected {
            return None;
        }
        if all {
            return Some(event.clone());
        }
        let builder = event
            .to_builder()
            .retain(|key, _| self.verdict(key) != Verdict::Dropped);
        Some(builder.build())
    }

    fn verdict(&self, key: &str) -> Verdict {
        let matches = |patterns: &[Pattern]| patterns.iter().any(|p| p.matches(key));
        if matches(&self.drop) {
            Verdict::Dropped
        } else if (self.keep.is_empty() && !self.drop.is_empty()) || matches(&self.keep) {
            Verdict::Selected
        } else if matches(&self.context) {
            Verdict::Context
        } else {
            Verdict::Dropped
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Selected,
    Context,
    Dropped,
}

impl std::str::FromStr for KeySelection {
    type Err = SelectionError;

    fn from_str(text: &str) -> Result<Self, SelectionError> {
        let mut selection = KeySelection {
            text: text.to_owned(),
            keep: Vec::new(),
            context: Vec::new(),
            drop: Vec::new(),
        };
        for (index, raw) in text.split(',').enumerate() {
            let error = |message: String| SelectionError {
                item: index + 1,
                text: raw.to_owned(),
                message,
            };
            let item = raw.trim();
            let (list, pattern) = match item.as_bytes().first() {
                None => return Err(error("empty: expected a key pattern".into())),
                Some(b'+') => (&mut selection.context, &item[1..]),
                Some(b'!') => (&mut selection.drop, &item[1..]),
                Some(_) => (&mut selection.keep, item),
            };
            if pattern.trim().is_empty() {
                return Err(error(format!(
                    "`{}` must be followed by a key pattern",
                    &item[..1]
                )));
            }
            let pattern = Pattern::new(pattern.trim())
                .map_err(|e| error(format!("bad pattern: {}", e.msg)))?;
            list.push(pattern);
        }
        if selection.keep.is_empty() && selection.drop.is_empty() {
            return Err(SelectionError {
                item: 1,
                text: text.to_owned(),
                message: "only context keys (`+key`): name at least one key to keep or to drop"
                    .into(),
            });
        }
        Ok(selection)
    }
}

impl std::fmt::Display for KeySelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(keys: &[&'static str]) -> Event {
        Event::new(keys.iter().map(|k| (*k, giving::Value::from(1u64))))
    }

    fn kept(selection: &str, keys: &[&'static str]) -> Option<Vec<String>> {
        let selection: KeySelection = selection.parse().unwrap();
        selection
            .apply(&event(keys))
            .map(|e| e.keys().map(str::to_owned).collect())
    }

    #[test]
    fn patterns_context_and_exclusions_follow_the_documented_rules() {
        assert_eq!(kept("loss", &["step", "loss"]).unwrap(), ["loss"]);
        assert_eq!(kept("loss", &["step"]), None);
        assert_eq!(
            kept("gpu*,+task", &["task", "gpudata", "gpu_x", "cpu"]).unwrap(),
            ["task", "gpudata", "gpu_x"]
        );
        assert_eq!(kept("loss,+task", &["task", "step"]), None);
        assert_eq!(
            kept("!batch", &["step", "batch", "loss"]).unwrap(),
            ["step", "loss"]
        );
        assert_eq!(kept("!batch", &["batch"]), None);
        assert_eq!(kept("*,!b?tch", &["batch", "botch", "x"]).unwrap(), ["x"]);
        assert_eq!(kept("+task,!step", &["task", "x"]).unwrap(), ["task", "x"]);
        assert_eq!(
            kept("[lr]*", &["loss", "rate", "step"]).unwrap(),
            ["loss", "rate"]
        );
    }

    #[test]
    fn an_event_kept_whole_is_not_copied() {
        let selection: KeySelection = "*".parse().unwrap();
        let original = event(&["a", "b"]);
        let kept = selection.apply(&original).unwrap();
        assert_eq!(kept, original);
        assert_eq!(kept.time(), original.time());
    }

    #[test]
    fn bad_selections_name_the_item_and_what_is_wrong() {
        let error = |text: &str| text.parse::<KeySelection>().unwrap_err().to_string();
        assert_eq!(
            error("loss,,rate"),
            "key selection item 2 (``): empty: expected a key pattern"
        );
        assert_eq!(
            error("loss, + "),
            "key selection item 2 (` + `): `+` must be followed by a key pattern"
        );
        assert!(error("loss,[abc").starts_with("key selection item 2 (`[abc`): bad pattern:"));
        assert!(error("+task").contains("only context keys"));
    }
}
