//! What a thread adds to every event it gives: inherited fields ([`inherit!`](crate::inherit),
//! Python giving's `give.inherit`) and opt-in special keys ([`SpecialKey`]: `$time`, `$line`).
//!
//! The give path checks one thread-local flag; only when a context is active does it build
//! the event with the extra fields.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

use crate::event::{Field, Origin, Timestamp};
use crate::{Event, Key, Value};

/// A field a give can carry on request, about the give itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialKey {
    /// `$time`: when the event was given, in seconds since the Unix epoch (`f64`, as Python's
    /// `time.time()`). Every event has its time anyway ([`Event::time`]); this puts it among
    /// the fields, for sinks that only see fields.
    Time,
    /// `$line`: where it was given, `file:line` (`str`); see [`Event::origin`].
    Line,
}

impl SpecialKey {
    /// The field's key: `$time` or `$line`.
    pub fn key(self) -> &'static str {
        match self {
            SpecialKey::Time => "$time",
            SpecialKey::Line => "$line",
        }
    }
}

/// One level of context: what one guard added.
struct Level {
    fields: Vec<Field>,
    special: Vec<SpecialKey>,
}

thread_local! {
    /// Whether any level is active: the one check on the give path.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static LEVELS: RefCell<Vec<Level>> = const { RefCell::new(Vec::new()) };
}

/// Whether this thread adds anything to the events it gives.
#[inline]
pub(crate) fn is_active() -> bool {
    ACTIVE.try_with(Cell::get).unwrap_or(false)
}

/// The event of `fields` given now at `origin`, with this thread's context: inherited fields
/// first (outermost guard first), then the give's own, then the special keys. A key given
/// explicitly wins over the same key inherited, as in Python giving.
pub(crate) fn event_with(
    origin: &'static Origin,
    fields: impl IntoIterator<Item = Field>,
) -> Event {
    let time = Timestamp::now();
    let own: Vec<Field> = fields.into_iter().collect();
    let mut all: Vec<Field> = Vec::with_capacity(own.len() + 4);
    let mut special: Vec<SpecialKey> = Vec::new();
    let _ = LEVELS.try_with(|levels| {
        for level in levels.borrow().iter() {
            for (key, value) in &level.fields {
                let overridden = own.iter().any(|(k, _)| k == key);
                let repeated = all.iter().any(|(k, _)| k == key);
                if !overridden && !repeated {
                    all.push((key.clone(), value.clone()));
                }
            }
            for key in &level.special {
                if !special.contains(key) {
                    special.push(*key);
                }
            }
        }
    });
    all.extend(own);
    for key in special {
        let value = match key {
            SpecialKey::Time => Value::F64(time.as_nanos() as f64 / 1e9),
            SpecialKey::Line => Value::from(format!("{}:{}", origin.file, origin.line)),
        };
        all.push((Key::from_static(key.key()), value));
    }
    Event::from_fields(all.into_iter(), time, Some(origin))
}

/// While alive, every event this thread gives carries the guard's fields and special keys;
/// see [`inherit!`](crate::inherit) and [`special_keys`]. Guards nest; drop them in reverse
/// order of creation (as scopes do). Stays on its thread.
#[must_use = "the context ends when the guard is dropped"]
pub struct Inherited {
    _not_send: PhantomData<*const ()>,
}

impl Inherited {
    /// Pushes a level; public for the [`inherit!`](crate::inherit) macro.
    #[doc(hidden)]
    pub fn push(fields: Vec<(&'static str, Value)>, special: Vec<SpecialKey>) -> Self {
        let fields = fields
            .into_iter()
            .map(|(key, value)| (Key::from_static(key), value))
            .collect();
        let _ = LEVELS.try_with(|levels| levels.borrow_mut().push(Level { fields, special }));
        let _ = ACTIVE.try_with(|active| active.set(true));
        Self {
            _not_send: PhantomData,
        }
    }
}

impl Drop for Inherited {
    fn drop(&mut self) {
        let _ = LEVELS.try_with(|levels| {
            let mut levels = levels.borrow_mut();
            levels.pop();
            let _ = ACTIVE.try_with(|active| active.set(!levels.is_empty()));
        });
    }
}

impl std::fmt::Debug for Inherited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inherited").finish_non_exhaustive()
    }
}

/// Every event this thread gives while the guard lives carries the special keys asked for
/// (`$time`, `$line`): Python giving's special keys, opt-in.
///
/// ```
/// use giving::prelude::*;
/// use giving::{SpecialKey, give, given, special_keys};
///
/// let gv = given();
/// let events = gv.stream();
/// {
///     let _keys = special_keys([SpecialKey::Line, SpecialKey::Time]);
///     give!(x = 1);
/// }
/// give!(x = 2);
/// gv.finish().unwrap();
/// let events: Vec<_> = futures::executor::block_on(events.collect());
/// let line = events[0].get_as::<String>("$line").unwrap();
/// assert!(line.contains(".rs:"), "file:line, got {line}");
/// assert!(events[0].get_as::<f64>("$time").unwrap() > 1.7e9);
/// assert!(!events[1].has("$line"), "only inside the guard");
/// ```
pub fn special_keys(keys: impl IntoIterator<Item = SpecialKey>) -> Inherited {
    Inherited::push(Vec::new(), keys.into_iter().collect())
}

/// Every event this thread gives while the guard lives also carries these fields (Python
/// giving's `give.inherit`, which voir's `iterate` uses to tag a loop's events with its task).
/// Same field syntax as [`give!`](macro@crate::give); the values are computed once, now. A key the
/// give sets itself wins over the inherited one.
///
/// ```
/// use giving::prelude::*;
/// use giving::{give, given, inherit};
///
/// let gv = given();
/// let events = gv.stream();
/// {
///     let _train = inherit!(task = "train", epoch = 3);
///     give!(loss = 0.5);
///     give!(loss = 0.4, epoch = 4); // its own epoch wins
/// }
/// give!(loss = 0.3);
/// gv.finish().unwrap();
/// let shown: Vec<String> = futures::executor::block_on(events.map(|e| e.to_string()).collect());
/// assert_eq!(shown, ["task=train epoch=3 loss=0.5", "task=train loss=0.4 epoch=4", "loss=0.3"]);
/// ```
#[macro_export]
macro_rules! inherit {
    ($($fields:tt)+) => {
        $crate::Inherited::push(
            ::std::vec::Vec::from($crate::__give_array!([] $($fields)+)),
            ::std::vec::Vec::new(),
        )
    };
}
