//! Events whose lazy values a file sink (the log, the trace) reads together, once per sync window, instead of one
//! by one: milabench's `LazyLossPusher`. On a GPU, reading a loss is a device sync and a
//! transfer; reading a window's losses together (`LazyValue::resolve_all`, one read per
//! device for burn tensors) costs one of each per window.
//!
//! An event with an unread lazy value opens a window; every event after it is held too, so
//! the file keeps the order events came in. The window closes at the next step event that
//! `iterate` marks `synced` (the loop synced the device there anyway), when it has held
//! [`MAX_HELD`] events, or at its deadline: at most [`MAX_AGE`] after it opened, so a crash
//! loses no more than the log's write-out bound.

use std::time::{Duration, Instant};

use giving::vocab::keys;
use giving::{Event, LazyValue, Value};

/// The longest a window stays open: the log's write-out bound.
pub(crate) const MAX_AGE: Duration = Duration::from_millis(200);

/// The most events a window holds.
const MAX_HELD: usize = 4096;

/// Holds events whose lazy values (a loss tensor still on the device) are best read together,
/// once per sync window, and hands them on in order once read: what the log, the trace and
/// the NATS publisher do off the training thread, so that reading losses costs one device
/// read per window rather than one per step. An event with an unread lazy value opens a
/// window; it closes at the next step event marked `synced`, after 4096 events, or at its
/// [`deadline`](LazyWindow::deadline) (200 ms after it opened).
///
/// ```
/// use giving::{Event, Resolve, ResolveError, Value};
/// use giving_instruments::LazyWindow;
///
/// struct OnDevice(f64);
/// impl Resolve for OnDevice {
///     fn resolve(&self) -> Result<Value, ResolveError> {
///         Ok(Value::F64(self.0))
///     }
/// }
///
/// let mut window = LazyWindow::default();
/// let mut out = Vec::new();
/// window.push(Event::new([("lr", 0.1)]), |e| out.push(e.to_string())); // nothing to read
/// window.push(Event::new([("loss", Value::lazy(OnDevice(0.5)))]), |e| out.push(e.to_string()));
/// assert_eq!(out.len(), 1, "the loss waits for its window");
/// let synced = Event::new([("step", Value::U64(9)), ("synced", Value::Bool(true))]);
/// window.push(synced, |e| out.push(e.to_string()));
/// assert_eq!(out, ["lr=0.1", "loss=0.5", "step=9 synced=true"]);
/// ```
#[derive(Default)]
pub struct LazyWindow {
    held: Vec<Event>,
    opened: Option<Instant>,
}

impl LazyWindow {
    /// Takes an event: hands it to `write` at once when no window is open and it has nothing
    /// to read; else holds it, and hands every held event to `write` if it closes the window.
    pub fn push(&mut self, event: Event, mut write: impl FnMut(&Event)) {
        if self.must_hold(&event) {
            self.hold(event, write);
        } else {
            write(&event);
        }
    }

    /// [`push`](Self::push) for an event lent by
    /// [`EventStream::next_ref`](giving::EventStream::next_ref): cloned only when it must be
    /// held, so an event with nothing to read, outside a window, is written in place.
    ///
    /// ```
    /// use giving::Event;
    /// use giving_instruments::LazyWindow;
    ///
    /// let mut window = LazyWindow::default();
    /// let mut out = Vec::new();
    /// window.push_ref(&Event::new([("lr", 0.1)]), |e| out.push(e.to_string()));
    /// assert_eq!(out, ["lr=0.1"]);
    /// ```
    pub fn push_ref(&mut self, event: &Event, mut write: impl FnMut(&Event)) {
        if self.must_hold(event) {
            self.hold(event.clone(), write);
        } else {
            write(event);
        }
    }

    /// Whether `event` waits for a window: one is open (order is kept), or it has a value to
    /// read.
    fn must_hold(&self, event: &Event) -> bool {
        !self.held.is_empty() || has_unread(event)
    }

    /// Holds `event` in the window (opening it), releasing the window if `event` closes it or
    /// fills it.
    fn hold(&mut self, event: Event, write: impl FnMut(&Event)) {
        let closes = matches!(event.get(keys::SYNCED), Some(Value::Bool(true)));
        self.opened.get_or_insert_with(Instant::now);
        self.held.push(event);
        if closes || self.held.len() >= MAX_HELD {
            self.release(write);
        }
    }

    /// When the open window must be released, if one is open.
    pub fn deadline(&self) -> Option<Instant> {
        self.opened.map(|opened| opened + MAX_AGE)
    }

    /// Reads the held events' lazy values together and hands the events to `write`, in order.
    pub fn release(&mut self, mut write: impl FnMut(&Event)) {
        self.opened = None;
        if self.held.is_empty() {
            return;
        }
        let lazy: Vec<&LazyValue> = self
            .held
            .iter()
            .flat_map(|event| event.iter())
            .filter_map(|(_, value)| match value {
                Value::Lazy(lazy) => Some(lazy),
                _ => None,
            })
            .collect();
        LazyValue::resolve_all(&lazy);
        for event in self.held.drain(..) {
            write(&event);
        }
    }
}

/// The earlier of two optional deadlines (a sink's write-out and its window's).
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether `event` has a lazy value not yet read (at its top level, where losses are).
fn has_unread(event: &Event) -> bool {
    event
        .iter()
        .any(|(_, value)| matches!(value, Value::Lazy(lazy) if !lazy.is_resolved()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use giving::{ReadMany, Resolve, ResolveError};
    use std::cell::Cell;

    thread_local! {
        // Per test thread: the batches read on it (tests run in parallel).
        static BATCHES: Cell<usize> = const { Cell::new(0) };
    }

    struct OnDevice(f64);

    impl Resolve for OnDevice {
        fn resolve(&self) -> Result<Value, ResolveError> {
            Ok(Value::F64(self.0))
        }
        fn read_many(&self) -> Option<ReadMany> {
            Some(|sources| {
                BATCHES.set(BATCHES.get() + 1);
                sources.iter().map(|s| s.resolve()).collect()
            })
        }
    }

    fn loss(x: f64) -> Event {
        Event::new([("loss", Value::lazy(OnDevice(x)))])
    }

    #[test]
    fn a_window_is_read_together_and_written_in_order_when_a_synced_step_closes_it() {
        let mut window = LazyWindow::default();
        let mut written: Vec<String> = Vec::new();
        let before = BATCHES.get();
        {
            let mut write = |e: &Event| written.push(e.to_string());
            window.push(Event::new([("lr", 0.1)]), &mut write);
            window.push(loss(1.0), &mut write);
            window.push(Event::new([("step", 1u64)]), &mut write);
            window.push(loss(2.0), &mut write);
            assert!(window.deadline().is_some());
            window.push(
                Event::new([("step", Value::U64(2)), ("synced", Value::Bool(true))]),
                &mut write,
            );
        }
        assert_eq!(BATCHES.get() - before, 1, "one read");
        assert_eq!(window.deadline(), None);
        assert_eq!(
            written,
            ["lr=0.1", "loss=1", "step=1", "loss=2", "step=2 synced=true"]
        );
    }

    #[test]
    fn release_writes_what_is_held_and_nothing_twice() {
        let mut window = LazyWindow::default();
        let mut written = 0;
        window.push(loss(3.0), |_| written += 1);
        assert_eq!(written, 0);
        window.release(|e| {
            let Some(Value::Lazy(lazy)) = e.get("loss") else {
                panic!("a lazy loss");
            };
            assert!(lazy.is_resolved(), "read before it is written");
            assert_eq!(lazy.resolve().unwrap(), &Value::F64(3.0));
            written += 1;
        });
        window.release(|_| written += 1);
        assert_eq!(written, 1);
    }
}
