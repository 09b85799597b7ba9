//! Wrapped blocks: [`wrap!`](macro@crate::wrap) gives a `begin` event when a block starts and an `end`
//! event when it ends, which [`group_wrap`](crate::EventStreamOps::group_wrap) and
//! [`wmap`](crate::EventStreamOps::wmap) pair up (Python giving's `give.wrap`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::Stamp;
use crate::event::{Fields, Origin};
use crate::give::is_listening;
use crate::routing;
use crate::vocab::keys;
use crate::{Event, Key, Value};

/// Ids of wrapped blocks: unique in the process.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Whether an event marks the beginning or the end of a wrapped block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WrapStep {
    /// Given when the block starts (`"begin"`).
    Begin,
    /// Given when the block ends (`"end"`).
    End,
}

impl WrapStep {
    /// `"begin"` or `"end"`, as in the event.
    pub fn as_str(self) -> &'static str {
        match self {
            WrapStep::Begin => "begin",
            WrapStep::End => "end",
        }
    }
}

/// The `$wrap` marker of an event given by [`wrap!`](macro@crate::wrap): which block, which step.
///
/// ```
/// use giving::prelude::*;
/// use giving::{WrapMark, WrapStep, given, wrap};
///
/// let gv = given();
/// let events = gv.stream();
/// {
///     let _epoch = wrap!("epoch", lr = 0.1);
/// }
/// gv.finish().unwrap();
/// let events: Vec<_> = futures::executor::block_on(events.collect());
/// let begin = WrapMark::of(&events[0]).unwrap();
/// let end = WrapMark::of(&events[1]).unwrap();
/// assert_eq!((begin.name, begin.step), ("epoch", WrapStep::Begin));
/// assert_eq!((end.name, end.step, end.id), ("epoch", WrapStep::End, begin.id));
/// assert_eq!(events[1].get_as::<f64>("lr").unwrap(), 0.1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrapMark<'a> {
    /// The name given to `wrap!`.
    pub name: &'a str,
    /// Begin or end.
    pub step: WrapStep,
    /// The id of the block, shared by its begin and end events.
    pub id: u64,
}

impl<'a> WrapMark<'a> {
    /// The marker of `event`, if it has a well-formed `$wrap` field.
    pub fn of(event: &'a Event) -> Option<WrapMark<'a>> {
        let Value::Map(mark) = event.get(keys::WRAP)? else {
            return None;
        };
        let name = match mark.get("name")? {
            Value::Str(name) => name,
            _ => return None,
        };
        let step = match mark.get("step")? {
            Value::Str(step) if &**step == "begin" => WrapStep::Begin,
            Value::Str(step) if &**step == "end" => WrapStep::End,
            _ => return None,
        };
        let id = match mark.get("id")? {
            Value::U64(id) => *id,
            Value::I64(id) => u64::try_from(*id).ok()?,
            _ => return None,
        };
        Some(WrapMark { name, step, id })
    }
}

/// Marks a block: gives a `begin` event now and an `end` event when the returned [`Wrap`]
/// guard is dropped (Python giving's `give.wrap(name, **fields)`).
///
/// Both events have the field `$wrap` = `{name, step: "begin" | "end", id}` (read it with
/// [`WrapMark::of`]) followed by the fields, with the syntax of [`give!`](macro@crate::give):
/// `wrap!("epoch")`, `wrap!("step", step, lr = 0.1)`. The `end` event repeats them, plus the
/// fields set on the guard with [`Wrap::set`]. The events are routed as `give!`'s; when nobody
/// listens at the start of the block the fields are not evaluated, neither event is given,
/// and the guard costs nothing more.
///
/// ```
/// use giving::prelude::*;
/// use giving::{give, given, wrap};
///
/// let gv = given();
/// let per_epoch = gv.stream().group_wrap("epoch").then(|g| g.key::<f64>("loss").sum());
/// let sums = gv.spawn(per_epoch.collect::<Vec<_>>());
/// for epoch in 0..2 {
///     let mut block = wrap!("epoch", epoch);
///     for loss in [1.0, 2.0] {
///         give!(loss);
///     }
///     block.set("done", true);
/// } // the guard ends the block here
/// gv.finish().unwrap();
/// assert_eq!(sums.join().unwrap(), vec![Some(3.0), Some(3.0)]);
/// ```
#[macro_export]
macro_rules! wrap {
    ($name:expr $(,)?) => {{
        $crate::Wrap::__begin($crate::__origin!(), $name, || $crate::__private::fields([]))
    }};
    ($name:expr, $($fields:tt)+) => {{
        $crate::Wrap::__begin($crate::__origin!(), $name, || $crate::__give_fields!([] $($fields)+))
    }};
}

/// Guard of a wrapped block made by [`wrap!`](macro@crate::wrap): gives the block's `end` event when
/// dropped (or at [`end`](Wrap::end)), also when unwinding from a panic.
#[must_use = "the block ends when the guard is dropped: bind it (`let _block = wrap!(..);`)"]
pub struct Wrap {
    active: Option<Active>,
}

struct Active {
    name: Key,
    id: u64,
    fields: Fields,
    origin: &'static Origin,
}

/// The `$wrap` field of a block's event.
fn mark(name: &Key, step: WrapStep, id: u64) -> (Key, Value) {
    let map = BTreeMap::from([
        ("id".to_owned(), Value::U64(id)),
        ("name".to_owned(), Value::Str(name.as_ref().into())),
        ("step".to_owned(), Value::from(step.as_str())),
    ]);
    (Key::from_static(keys::WRAP), Value::Map(map))
}

/// The block's `begin` or `end` event.
fn mark_event(active: &Active, step: WrapStep) -> Event {
    let mut fields = Fields::with_capacity(active.fields.len() + 1);
    fields.push(mark(&active.name, step, active.id));
    fields.extend(active.fields.iter().cloned());
    Event::from_parts(fields, Stamp::now(), Some(active.origin))
}

impl Wrap {
    #[doc(hidden)]
    pub fn __begin(
        origin: &'static Origin,
        name: impl Into<Key>,
        build: impl FnOnce() -> Fields,
    ) -> Wrap {
        if !is_listening() {
            return Wrap { active: None };
        }
        // The block is active only if its `begin` was given: built and delivered by the give
        // path when this thread has a receiver, nothing built otherwise.
        let mut active = None;
        routing::give(|| {
            let begun = Active {
                name: name.into(),
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                fields: build(),
                origin,
            };
            let event = mark_event(&begun, WrapStep::Begin);
            active = Some(begun);
            event
        });
        Wrap { active }
    }

    /// Whether the `begin` event was given (someone listened when the block started); if not,
    /// the block gives nothing.
    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }

    /// The id of the block (shared by its `begin` and `end` events), if it is active.
    pub fn id(&self) -> Option<u64> {
        self.active.as_ref().map(|a| a.id)
    }

    /// Sets a field of the `end` event (giving's `with give.wrap(...) as extra: extra[key] =
    /// value`): replaced if present, appended otherwise.
    pub fn set(&mut self, key: impl Into<Key>, value: impl Into<Value>) {
        let Some(active) = &mut self.active else {
            return;
        };
        let key = key.into();
        let value = value.into();
        match active.fields.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => active.fields.push((key, value)),
        }
    }

    /// Ends the block now: gives the `end` event.
    pub fn end(self) {}
}

impl Drop for Wrap {
    fn drop(&mut self) {
        if let Some(active) = self.active.take()
            && is_listening()
        {
            routing::give(|| mark_event(&active, WrapStep::End));
        }
    }
}

impl fmt::Debug for Wrap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.active {
            Some(active) => f
                .debug_struct("Wrap")
                .field("name", &active.name)
                .field("id", &active.id)
                .finish(),
            None => f.debug_struct("Wrap").field("active", &false).finish(),
        }
    }
}
