//! [`OutOfBand`]: voir's out-of-band events, the lines `{"$event": NAME, "$data": …}` a child
//! writes to say something about its run rather than give data.

use giving::vocab::keys;
use giving::{Event, Value};

/// voir's `$event` names the runner acts on: written by voir's `Overseer` (`phase` as each
/// phase starts, `error` when the script raised) and by its `early_stop(signal="stop")`.
const STOP: &str = "stop";
const ERROR: &str = "error";
const PHASE: &str = "phase";

/// The fields of `$data` voir writes: `{"type", "message"}` for an error, `{"name"}` for a
/// phase (voir's `overseer.py`). They are fields of the child's map, not event keys.
const ERROR_TYPE: &str = "type";
const ERROR_MESSAGE: &str = "message";
const PHASE_NAME: &str = "name";

/// One of voir's out-of-band events, read from an event a child sent ([`OutOfBand::of`]).
///
/// ```
/// use giving_log::protocol::{DataDecoder, Incoming, OutOfBand};
///
/// let lines = concat!(
///     "{\"$event\": \"phase\", \"$data\": {\"name\": \"run_script\"}}\n",
///     "{\"rate\": 12.5, \"task\": \"train\"}\n",
///     "{\"$event\": \"stop\"}\n",
/// );
/// let read: Vec<Option<OutOfBand>> = DataDecoder::new()
///     .push(lines.as_bytes())
///     .iter()
///     .map(|item| match item {
///         Incoming::Event(e) => OutOfBand::of(e),
///         _ => None,
///     })
///     .collect();
/// assert_eq!(read, [Some(OutOfBand::Phase("run_script".into())), None, Some(OutOfBand::Stop)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutOfBand {
    /// `{"$event": "stop"}`: the benchmark has measured what it was asked to (voir's
    /// `early_stop(signal="stop")`, which milabench's benchmarks use) and asks to be ended:
    /// milabench's runner terminates it and counts it a success, whatever its exit status.
    Stop,
    /// `{"$event": "error", "$data": {"type": "ValueError", "message": "bad batch"}}`: the
    /// script raised (voir writes it, then the exception ends the process).
    Error {
        /// The exception's type (`""` when the child sent none).
        kind: String,
        /// Its message (`""` when the child sent none).
        message: String,
    },
    /// `{"$event": "phase", "$data": {"name": "run_script"}}`: voir's overseer entered a
    /// phase (`init`, `parse_args`, `load_script`, `run_script`, `finalize`).
    Phase(String),
    /// Another `$event` (voir's `overseer_error`: an instrument failed, the run goes on): not
    /// acted on.
    Other(String),
}

impl OutOfBand {
    /// The out-of-band event `event` is, if it is one (it has a string `$event`).
    pub fn of(event: &Event) -> Option<Self> {
        let name = event.get(keys::VOIR_EVENT)?.as_str()?;
        let data = event.get(keys::VOIR_DATA);
        let field = |key: &str| match data {
            Some(Value::Map(map)) => map.get(key).and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        Some(match name {
            STOP => OutOfBand::Stop,
            ERROR => OutOfBand::Error {
                kind: field(ERROR_TYPE).unwrap_or_default(),
                message: field(ERROR_MESSAGE).unwrap_or_default(),
            },
            PHASE => match field(PHASE_NAME) {
                Some(name) => OutOfBand::Phase(name),
                None => OutOfBand::Other(name.to_owned()),
            },
            other => OutOfBand::Other(other.to_owned()),
        })
    }

    /// For an [`Error`](OutOfBand::Error), its text as milabench's `error` layer writes it:
    /// `ValueError: bad batch` (the type alone without a message, the message alone without a
    /// type).
    pub fn error_text(&self) -> Option<String> {
        let OutOfBand::Error { kind, message } = self else {
            return None;
        };
        Some(match (kind.is_empty(), message.is_empty()) {
            (false, false) => format!("{kind}: {message}"),
            (false, true) => kind.clone(),
            (true, false) => message.clone(),
            (true, true) => "an error event without a type or message".to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{DataDecoder, Incoming};

    /// The events decoded from `lines`, as voir writes them (`json.dumps` + `\n`).
    fn read(lines: &str) -> Vec<Option<OutOfBand>> {
        DataDecoder::new()
            .push(lines.as_bytes())
            .into_iter()
            .map(|item| match item {
                Incoming::Event(e) => OutOfBand::of(&e),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn voirs_lines_are_read_byte_for_byte() {
        // What voir 0.2's Overseer and early_stop write, byte for byte.
        let got = read(concat!(
            "{\"$event\": \"phase\", \"$data\": {\"name\": \"init\"}}\n",
            "{\"$event\": \"error\", \"$data\": {\"type\": \"ValueError\", \"message\": \"bad batch\"}}\n",
            "{\"$event\": \"stop\"}\n",
            "{\"$event\": \"overseer_error\", \"$data\": {\"type\": \"KeyError\", \"message\": \"'x'\"}}\n",
            "{\"rate\": 3.5, \"task\": \"train\"}\n",
        ));
        assert_eq!(
            got,
            [
                Some(OutOfBand::Phase("init".to_owned())),
                Some(OutOfBand::Error {
                    kind: "ValueError".to_owned(),
                    message: "bad batch".to_owned()
                }),
                Some(OutOfBand::Stop),
                Some(OutOfBand::Other("overseer_error".to_owned())),
                None,
            ]
        );
        assert_eq!(
            got[1].as_ref().and_then(OutOfBand::error_text).as_deref(),
            Some("ValueError: bad batch")
        );
        assert_eq!(got[2].as_ref().and_then(OutOfBand::error_text), None);
    }

    #[test]
    fn partial_events_are_read_as_far_as_they_go() {
        let got = read(concat!(
            "{\"$event\": \"error\", \"$data\": {\"type\": \"KeyboardInterrupt\", \"message\": \"\"}}\n",
            "{\"$event\": \"error\"}\n",
            "{\"$event\": \"phase\", \"$data\": null}\n",
            "{\"$event\": 3}\n",
        ));
        let texts: Vec<Option<String>> = got
            .iter()
            .map(|o| o.as_ref().and_then(OutOfBand::error_text))
            .collect();
        assert_eq!(
            texts,
            [
                Some("KeyboardInterrupt".to_owned()),
                Some("an error event without a type or message".to_owned()),
                None,
                None
            ]
        );
        assert_eq!(got[2], Some(OutOfBand::Other("phase".to_owned())));
        assert_eq!(got[3], None, "a `$event` that is not a string is data");
    }
}
