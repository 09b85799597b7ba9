//! Spans begun and ended by label (libpvti's `Tracepoint::begin(channel, label)` and
//! `Tracepoint::end(channel, label)`): for a begin and an end in different callbacks, where
//! no guard can be held from one to the other.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use super::{Channel, TRACEPOINT_ORIGIN, Tracepoint, is_listening};

/// The spans begun by label and not yet ended, by channel and label; the latest last.
type Open = HashMap<(Channel, Arc<str>), Vec<Tracepoint>>;

fn open() -> MutexGuard<'static, Open> {
    static OPEN: OnceLock<Mutex<Open>> = OnceLock::new();
    OPEN.get_or_init(Mutex::default)
        .lock()
        // A map of guards: a panic elsewhere leaves it whole.
        .unwrap_or_else(PoisonError::into_inner)
}

impl Channel {
    /// Begins a span named `label` on this channel, to be ended by [`end`](Channel::end) with
    /// the same label — from another callback, or another thread (libpvti's
    /// `Tracepoint::begin`). The span is drawn on the thread that began it, on a track of its
    /// label under the channel's: spans of different labels may overlap without nesting (a
    /// request ends before the upload it started), which one track could not draw. Labels
    /// nest: an end closes the latest begin of its label on its channel. Nothing happens when
    /// nobody listens or the channel is disabled.
    ///
    /// ```
    /// use giving::timeline::Channel;
    ///
    /// let io = Channel::new("doc labeled io");
    /// let gv = giving::given();
    /// let on_request = || io.begin("request");
    /// let on_response = || io.end("request");
    /// on_request();
    /// assert!(on_response()); // ended the span begun by the other callback
    /// assert!(!io.end("request")); // nothing left to end
    /// gv.finish().unwrap();
    /// ```
    pub fn begin(&self, label: &str) {
        if !is_listening() || !self.is_enabled() {
            return;
        }
        let span = Tracepoint::begin(&TRACEPOINT_ORIGIN, self, Arc::from(label), None, true);
        open()
            .entry((self.clone(), Arc::from(label)))
            .or_default()
            .push(span);
    }

    /// Ends the latest span begun by [`begin`](Channel::begin) with `label` on this channel
    /// (libpvti's `Tracepoint::end`); `false` when none is open. A span that began while
    /// someone listened ends even if its channel was disabled since, so that its slice ends.
    pub fn end(&self, label: &str) -> bool {
        let span = {
            let mut open = open();
            let key = (self.clone(), Arc::from(label));
            let Some(stack) = open.get_mut(&key) else {
                return false;
            };
            let span = stack.pop();
            if stack.is_empty() {
                open.remove(&key);
            }
            span
        };
        // Dropped outside the lock: its end event may reach instruments.
        span.map(Tracepoint::end).is_some()
    }
}
