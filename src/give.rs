//! The give side: the [`give!`](macro@crate::give) macro and the [`Giver`] handle.

use std::sync::Arc;

use crate::arena::InlineWriter;
use crate::clock::Stamp;
use crate::context;
use crate::event::{Fields, Origin};
use crate::feed::NO_SKIP;
use crate::routing;
use crate::scope::Scope;
use crate::{Event, Key, Value};

/// Gives values to whoever listens: every open [`given`](fn@crate::given) scope of this thread and
/// every global scope receives one [`Event`] with the fields.
///
/// - `give!(loss)` gives the field `loss` with the value of the variable `loss`;
/// - `give!(loss, acc)` gives two fields in one event;
/// - `give!(batch = x.len(), lr)` names a field explicitly; `"a.b" = expr` takes any string key.
///
/// Values are converted with [`ToValue`](crate::ToValue): the variables are cloned, not moved.
/// When nobody listens, the arguments are **not evaluated** and the call costs one relaxed
/// atomic load and a branch. Each event records its time and the file and line of the call.
///
/// ```
/// use giving::{give, given};
/// use giving::prelude::*;
///
/// let gv = given();
/// let events = gv.stream();
/// let loss = 0.25;
/// give!(loss, step = 10);
/// gv.finish().unwrap();
///
/// let events: Vec<_> = futures::executor::block_on(events.collect());
/// assert_eq!(events[0].to_string(), "loss=0.25 step=10");
/// assert_eq!(loss, 0.25); // still usable
/// ```
#[macro_export]
macro_rules! give {
    ($($fields:tt)+) => {
        if $crate::__private::is_listening() {
            $crate::__private::give_written($crate::__origin!(), |__fields| {
                $crate::__give_write!(__fields; $($fields)+)
            });
        }
    };
}

/// Builds an [`Event`] now, with the field syntax of [`give!`](macro@crate::give): for code that
/// hands events around explicitly ([`Giver::give`], tests, replays).
///
/// ```
/// let step = 3;
/// let event = giving::event!(step, loss = 0.5);
/// assert_eq!(event.to_string(), "step=3 loss=0.5");
/// ```
#[macro_export]
macro_rules! event {
    ($($fields:tt)+) => {{
        $crate::__private::event_from_array($crate::__origin!(), $crate::__give_array!([] $($fields)+))
    }};
}

/// The call site of the macro that expands this: a `&'static Origin` (a static per call site,
/// so recording where an event was given costs nothing).
#[doc(hidden)]
#[macro_export]
macro_rules! __origin {
    () => {{
        static ORIGIN: $crate::Origin = $crate::Origin {
            file: ::core::file!(),
            line: ::core::line!(),
            module: ::core::module_path!(),
        };
        &ORIGIN
    }};
}

/// The fields of `give!` syntax as a `Fields` collection (for wrappers built on it).
#[doc(hidden)]
#[macro_export]
macro_rules! __give_fields {
    ([] $($fields:tt)+) => {
        $crate::__private::fields($crate::__give_array!([] $($fields)+))
    };
}

/// The fields of `give!` syntax, each written through the `FieldWriter` `$w` as it is
/// evaluated, left to right.
#[doc(hidden)]
#[macro_export]
macro_rules! __give_write {
    ($w:ident;) => {()};
    ($w:ident; $key:ident = $value:expr $(, $($rest:tt)*)?) => {{
        $w.field(::core::stringify!($key), $crate::__give_value!($value));
        $crate::__give_write!($w; $($($rest)*)?)
    }};
    ($w:ident; $key:literal = $value:expr $(, $($rest:tt)*)?) => {{
        $w.field($key, $crate::__give_value!($value));
        $crate::__give_write!($w; $($($rest)*)?)
    }};
    ($w:ident; $name:ident $(, $($rest:tt)*)?) => {{
        $w.field(::core::stringify!($name), $crate::__give_value!($name));
        $crate::__give_write!($w; $($($rest)*)?)
    }};
}

/// The fields of `give!` syntax as an array of `(&'static str, Value)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __give_array {
    ([$($done:tt)*]) => {
        [$($done)*]
    };
    ([$($done:tt)*] $key:ident = $value:expr $(, $($rest:tt)*)?) => {
        $crate::__give_array!(
            [$($done)* (::core::stringify!($key), $crate::__give_value!($value)),]
            $($($rest)*)?
        )
    };
    ([$($done:tt)*] $key:literal = $value:expr $(, $($rest:tt)*)?) => {
        $crate::__give_array!(
            [$($done)* ($key, $crate::__give_value!($value)),]
            $($($rest)*)?
        )
    };
    ([$($done:tt)*] $name:ident $(, $($rest:tt)*)?) => {
        $crate::__give_array!(
            [$($done)* (::core::stringify!($name), $crate::__give_value!($name)),]
            $($($rest)*)?
        )
    };
}

/// Whether a scope is open anywhere (the fast check of `give!`).
#[inline(always)]
pub fn is_listening() -> bool {
    routing::any_scope_open()
}

/// Fields from the array the macros build.
#[inline]
pub fn fields<const N: usize>(fields: [(&'static str, Value); N]) -> Fields {
    fields
        .into_iter()
        .map(|(k, v)| (Key::from_static(k), v))
        .collect()
}

/// An event of `fields`, given now at `origin`.
pub fn event_at(origin: &'static Origin, fields: Fields) -> Event {
    Event::from_parts(fields, Stamp::now(), Some(origin))
}

/// An event of the array the macros build, straight into the event's allocation.
#[inline]
pub fn event_from_array<const N: usize>(
    origin: &'static Origin,
    fields: [(&'static str, Value); N],
) -> Event {
    let fields = fields.into_iter().map(|(k, v)| (Key::from_static(k), v));
    Event::from_fields(fields, Stamp::now(), Some(origin))
}

/// Where `give!` writes its fields, one at a time as it evaluates them: straight into the
/// event's slot. (Built as an array and then moved there, each `Value` was copied through the
/// stack a few times, and those copies, loads of a tag just stored byte-wise, stalled the
/// giving thread more than the rest of the path.)
///
/// The fields are written in place and counted once, when the writer is done (the arena's
/// `InlineWriter`: no per-field check of whether the list has spilled to the heap).
pub struct FieldWriter<'a> {
    fields: InlineWriter<'a>,
}

impl<'a> FieldWriter<'a> {
    /// A writer appending to `fields`, which must be empty and inline: a new list, as both
    /// callers (in this file) make it.
    #[inline(always)]
    fn new(fields: &'a mut Fields) -> Self {
        Self {
            fields: InlineWriter::new(fields),
        }
    }

    /// Appends the field `key: value`.
    #[inline(always)]
    pub fn field(&mut self, key: &'static str, value: Value) {
        self.fields.push(Key::from_static(key), value);
    }
}

/// The slow path of `give!` (some scope is open somewhere): `write` writes the fields straight
/// into the event's slot, and only when this thread has a receiver, in one visit to the
/// thread's routes.
#[inline]
pub fn give_written(origin: &'static Origin, write: impl FnOnce(&mut FieldWriter<'_>)) {
    routing::give(|| {
        if context::is_active() {
            let mut fields = Fields::new();
            write(&mut FieldWriter::new(&mut fields));
            context::event_with(origin, fields)
        } else {
            Event::from_writer(Some(origin), |fields| write(&mut FieldWriter { fields }))
        }
    });
}

/// Gives the fields `build` makes, if this thread has a receiver. The fields are built outside
/// any borrow of the routing table, so a field expression may itself give.
#[inline]
pub fn give_with(origin: &'static Origin, build: impl FnOnce() -> Fields) {
    routing::give(|| {
        if context::is_active() {
            context::event_with(origin, build())
        } else {
            event_at(origin, build())
        }
    });
}

/// An explicit handle for giving into a scope from any thread or task.
///
/// `give!` routes by the thread it runs on; a `Giver` routes to the scopes it was made for
/// (plus the global scopes), wherever it is used. Cheap to clone; `Send + Sync`.
///
/// ```
/// use giving::{event, given};
/// use giving::prelude::*;
///
/// let gv = given();
/// let events = gv.stream();
/// let giver = gv.giver();
/// std::thread::spawn(move || giver.give(event!(worker = 1))).join().unwrap();
/// gv.finish().unwrap();
/// let events: Vec<_> = futures::executor::block_on(events.collect());
/// assert_eq!(events[0].get_as::<i64>("worker").unwrap(), 1);
/// ```
#[derive(Clone)]
pub struct Giver {
    scopes: Arc<[Arc<Scope>]>,
    /// A derivation's own input (a feed reader's id), which its outputs do not reach (no
    /// feedback loops); [`NO_SKIP`] otherwise.
    skip: u64,
}

impl Giver {
    pub(crate) fn new(scopes: Vec<Arc<Scope>>) -> Self {
        Self {
            scopes: scopes.into(),
            skip: NO_SKIP,
        }
    }

    /// A giver whose events do not reach the feed reader `skip`.
    pub(crate) fn skipping(mut self, skip: u64) -> Self {
        self.skip = skip;
        self
    }

    /// A giver for the thread scopes the calling thread is in now (and the global scopes).
    pub fn current() -> Self {
        Self::new(routing::current_thread_scopes())
    }

    /// Whether giving now would reach an open scope: check it before building a costly event.
    pub fn is_listening(&self) -> bool {
        routing::any_scope_open()
            && (self.scopes.iter().any(|s| !s.is_finished()) || routing::has_global_scopes())
    }

    /// The stop tokens of this giver's scopes and of the global scopes open now: a loop that
    /// runs on a thread of its own (burn-train's `Learner`, through giving-burn's `StopBridge`)
    /// watches them to stop when [`iterate`](fn@crate::iterate) would have stopped.
    ///
    /// ```
    /// use giving::{Giver, given};
    ///
    /// let gv = given();
    /// let tokens = Giver::current().stop_tokens();
    /// gv.stop_token().stop();
    /// assert!(tokens.iter().any(|t| t.is_stopped()));
    /// ```
    pub fn stop_tokens(&self) -> Vec<crate::StopToken> {
        let mut tokens: Vec<crate::StopToken> = self
            .scopes
            .iter()
            .map(|scope| scope.stop_token().clone())
            .collect();
        tokens.extend(routing::global_stop_tokens());
        tokens
    }

    /// Gives `event` to this giver's scopes and to the global scopes (once each).
    pub fn give(&self, event: Event) {
        if !routing::any_scope_open() {
            return;
        }
        let skip = self.skip;
        for scope in self.scopes.iter() {
            scope.deliver(&event, skip);
        }
        routing::dispatch_global(&event, &self.scopes, skip);
    }
}

impl std::fmt::Debug for Giver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Giver")
            .field("scopes", &self.scopes.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::INLINE;
    use crate::drop_count::Counted;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const KEYS: [&str; 7] = ["a", "b", "c", "d", "e", "f", "g"];

    #[test]
    fn the_writer_counts_the_fields_in_place_and_past_the_inline_storage() {
        for count in 0..=KEYS.len() {
            let mut fields = Fields::new();
            {
                let mut writer = FieldWriter::new(&mut fields);
                for (i, key) in KEYS[..count].iter().enumerate() {
                    writer.field(key, Value::U64(i as u64));
                }
            }
            let written: Vec<(&str, Value)> = fields
                .iter()
                .map(|(k, v)| (k.as_ref(), v.clone()))
                .collect();
            let expected: Vec<(&str, Value)> = (0..count)
                .map(|i| (KEYS[i], Value::U64(i as u64)))
                .collect();
            assert_eq!(written, expected, "{count} fields");
            assert_eq!(fields.spilled(), count > INLINE);
        }
    }

    #[test]
    fn the_writer_writes_into_an_events_slot() {
        for count in [1, 2, INLINE + 1] {
            let event = Event::from_writer(None, |fields| {
                let mut writer = FieldWriter { fields };
                for (i, key) in KEYS[..count].iter().enumerate() {
                    writer.field(key, Value::F64(i as f64));
                }
            });
            let keys: Vec<&str> = event.fields().iter().map(|(k, _)| k.as_ref()).collect();
            assert_eq!(keys, KEYS[..count]);
            assert_eq!(
                event.get_as::<f64>(KEYS[count - 1]).unwrap(),
                (count - 1) as f64
            );
        }
    }

    #[test]
    fn a_give_whose_field_expression_frees_its_scope_and_reader_appends_nowhere() {
        // The give checks its route (one scope, one reader); its field expression then
        // finishes the scope and drops the scope and its only stream, which frees the feed
        // checked: the give must not append there (under Miri, in CI, an append to it is a use
        // after free).
        use std::cell::RefCell;
        let gv = RefCell::new(Some(crate::given()));
        let events = RefCell::new(Some(gv.borrow().as_ref().unwrap().stream()));
        crate::give!(before = 1);
        let mut seen = Vec::new();
        crate::give!(
            outer = {
                gv.borrow_mut().take().unwrap().finish().unwrap();
                let stream = events.borrow_mut().take().unwrap();
                seen = futures::executor::block_on(futures::StreamExt::collect::<Vec<_>>(stream));
                2
            }
        );
        crate::give!(after = 3);
        let shown: Vec<String> = seen.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["before=1"]);
    }

    #[test]
    fn a_panicking_field_expression_drops_the_fields_written_before_it() {
        for before in [1, INLINE, INLINE + 2] {
            let drops = Arc::new(AtomicUsize::new(0));
            let mut fields = Fields::new();
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut writer = FieldWriter::new(&mut fields);
                for key in &KEYS[..before] {
                    writer.field(key, Value::lazy(Counted(drops.clone())));
                }
                panic!("a field expression panics");
            }));
            assert!(panicked.is_err());
            assert_eq!(fields.len(), before);
            drop(fields);
            assert_eq!(drops.load(Ordering::SeqCst), before, "{before} written");
        }
    }
}
