//! The give side: the [`give!`](crate::give) macro and the [`Giver`] handle.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::event::{Fields, Origin, Timestamp};
use crate::scope::{self, ACTIVE_SCOPES, Scope};
use crate::{Event, Key, Value};

/// Gives values to whoever listens: every open [`given`](crate::given) scope of this thread and
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
            static ORIGIN: $crate::Origin = $crate::Origin {
                file: ::core::file!(),
                line: ::core::line!(),
                module: ::core::module_path!(),
            };
            $crate::__private::give_array(&ORIGIN, || $crate::__give_array!([] $($fields)+));
        }
    };
}

/// Builds an [`Event`] now, with the field syntax of [`give!`](crate::give): for code that
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
        static ORIGIN: $crate::Origin = $crate::Origin {
            file: ::core::file!(),
            line: ::core::line!(),
            module: ::core::module_path!(),
        };
        $crate::__private::event_from_array(&ORIGIN, $crate::__give_array!([] $($fields)+))
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

/// The fields of `give!` syntax as an array of `(&'static str, Value)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __give_array {
    ([$($done:tt)*]) => {
        [$($done)*]
    };
    ([$($done:tt)*] $key:ident = $value:expr $(, $($rest:tt)*)?) => {
        $crate::__give_array!(
            [$($done)* (::core::stringify!($key), $crate::ToValue::to_value(&$value)),]
            $($($rest)*)?
        )
    };
    ([$($done:tt)*] $key:literal = $value:expr $(, $($rest:tt)*)?) => {
        $crate::__give_array!(
            [$($done)* ($key, $crate::ToValue::to_value(&$value)),]
            $($($rest)*)?
        )
    };
    ([$($done:tt)*] $name:ident $(, $($rest:tt)*)?) => {
        $crate::__give_array!(
            [$($done)* (::core::stringify!($name), $crate::ToValue::to_value(&$name)),]
            $($($rest)*)?
        )
    };
}

#[doc(hidden)]
pub mod __private {
    use super::*;

    #[inline(always)]
    pub fn is_listening() -> bool {
        ACTIVE_SCOPES.load(Ordering::Relaxed) != 0
    }

    #[inline]
    pub fn fields<const N: usize>(fields: [(&'static str, Value); N]) -> Fields {
        fields
            .into_iter()
            .map(|(k, v)| (Key::Borrowed(k), v))
            .collect()
    }

    pub fn event_at(origin: &'static Origin, fields: Fields) -> Event {
        Event::from_parts(fields, Timestamp::now(), Some(origin))
    }

    #[inline]
    pub fn event_from_array<const N: usize>(
        origin: &'static Origin,
        fields: [(&'static str, Value); N],
    ) -> Event {
        let fields = fields.into_iter().map(|(k, v)| (Key::Borrowed(k), v));
        Event::from_fields(fields, Timestamp::now(), Some(origin))
    }

    /// The slow path of `give!` (some scope is open somewhere), for the fields the macro
    /// writes as an array: built straight into the event's allocation.
    #[inline]
    pub fn give_array<const N: usize>(
        origin: &'static Origin,
        build: impl FnOnce() -> [(&'static str, Value); N],
    ) {
        if scope::has_receivers() {
            scope::dispatch_owned(event_from_array(origin, build()));
        }
    }

    /// The slow path of `give!`: some scope is open somewhere. The fields are built only when
    /// this thread has a receiver, and outside any borrow of the routing table, so a field
    /// expression may itself give.
    #[inline]
    pub fn give_with(origin: &'static Origin, build: impl FnOnce() -> Fields) {
        if scope::has_receivers() {
            scope::dispatch_owned(event_at(origin, build()));
        }
    }
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
}

impl Giver {
    pub(crate) fn new(scopes: Vec<Arc<Scope>>) -> Self {
        Self {
            scopes: scopes.into(),
        }
    }

    /// A giver for the thread scopes the calling thread is in now (and the global scopes).
    pub fn current() -> Self {
        Self::new(scope::current_thread_scopes())
    }

    /// Whether giving now would reach an open scope: check it before building a costly event.
    pub fn is_listening(&self) -> bool {
        ACTIVE_SCOPES.load(Ordering::Relaxed) != 0
            && (self.scopes.iter().any(|s| !s.is_closed()) || scope::has_global_scopes())
    }

    /// Gives `event` to this giver's scopes and to the global scopes.
    pub fn give(&self, event: Event) {
        if ACTIVE_SCOPES.load(Ordering::Relaxed) == 0 {
            return;
        }
        for scope in self.scopes.iter() {
            scope.deliver(&event);
        }
        scope::dispatch_global(&event);
    }
}

impl std::fmt::Debug for Giver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Giver")
            .field("scopes", &self.scopes.len())
            .finish()
    }
}
