//! What a sink thread waits for next: an event, the end of its scope, the time to write its
//! buffer out, or a flush request. Shared by the sinks that write files as they go (the
//! MessagePack log, the trace), so they serve flushes and deadlines alike.

use std::time::{Duration, Instant};

use futures::FutureExt;
use giving::{Event, EventStream};

use crate::threaded::SinkControl;
use crate::window::{LazyWindow, earliest};

/// How many events a sink takes as they come, without a timer and without looking for a
/// flush request: under load a timer per event would cost more than writing it, and a request
/// waits for at most this many events.
const BURST: u32 = 64;

/// What a sink thread waits for.
enum Next<'a> {
    /// An event to write, lent in place by its stream (no reference count touched).
    Event(&'a Event),
    /// The scope ended.
    End,
    /// The buffered bytes are due to be written out and no event came to do it.
    Due,
    /// A flush was asked (Ctrl-C, a panic unwinding).
    Flush,
}

/// Waits for what comes next: an event already queued (up to [`BURST`] in a row), else
/// whichever of a flush request, an event and the write-out `deadline` comes first.
struct Drain {
    burst: u32,
}

impl Drain {
    fn new() -> Self {
        Self { burst: 0 }
    }

    async fn next<'a>(
        &mut self,
        stream: &'a mut EventStream,
        deadline: Option<Instant>,
        control: &SinkControl,
    ) -> Next<'a> {
        // A pending event is taken at once: a sink's stream is a plain subscription (never a
        // derivation's input, whose own outputs are counted pending but skipped), so
        // `next_ref` is ready. Asking `pending` first, rather than polling and falling back,
        // is what lets the lent event's borrow be returned.
        if self.burst < BURST && stream.pending() > 0 {
            self.burst += 1;
            return stream.next_ref().await.map_or(Next::End, Next::Event);
        }
        self.burst = 0;
        tokio::select! {
            biased;
            () = control.flush_requested() => Next::Flush,
            next = next_event(stream, deadline) => next,
        }
    }
}

/// The next event, or [`Next::Due`] if `deadline` passes first.
async fn next_event(stream: &mut EventStream, deadline: Option<Instant>) -> Next<'_> {
    let next = match deadline {
        Some(deadline) => {
            let deadline = tokio::time::Instant::from_std(deadline);
            match tokio::time::timeout_at(deadline, stream.next_ref()).await {
                Ok(next) => next,
                Err(_) => return Next::Due,
            }
        }
        None => stream.next_ref().await,
    };
    next.map_or(Next::End, Next::Event)
}

/// Writes every event already queued, for a flush: before the bytes go out.
fn write_queued(stream: &mut EventStream, sink: &mut impl FileSink) {
    // A stream yields now and then while events are queued (it returns `Pending` having woken
    // its task, so that the task's other streams take turns): asked again, it goes on.
    while stream.pending() > 0 {
        match stream.next_ref().now_or_never() {
            Some(Some(event)) => sink.write(event),
            Some(None) => return,
            None => {}
        }
    }
}

/// A sink that writes a file as it goes (the log, the trace), as [`run`] drives it.
pub(crate) trait FileSink {
    /// Writes one event (into the sink's buffer).
    fn write(&mut self, event: &Event);
    /// Hands the buffered bytes to the operating system.
    fn flush(&mut self);
    /// When the buffered bytes are due to be written out; `None` when nothing is buffered or
    /// after a failure (nothing more will be written).
    fn write_out_deadline(&self) -> Option<Instant>;
}

/// The end of a paced stream's batch (nothing more queued): what would be due before the next
/// tick is done now — held lazy values read, buffered bytes written out — so that the thread
/// sleeps until that tick instead of waking for a timer in between (on a machine the training
/// keeps busy, each wake-up takes a core from it). The write-out bound becomes the later of
/// the sink's own and the pace.
fn write_out_due_within(pace: Duration, window: &mut LazyWindow, sink: &mut impl FileSink) {
    let horizon = Instant::now() + pace;
    if window.deadline().is_some_and(|due| due <= horizon) {
        window.release(|e| sink.write(e));
    }
    if sink.write_out_deadline().is_some_and(|due| due <= horizon) {
        sink.flush();
    }
}

/// Drives `sink` until its scope ends: events as they come, lazy values read once per sync
/// window ([`LazyWindow`]), bytes written out when due, flushes served when asked.
pub(crate) async fn run(sink: &mut impl FileSink, stream: &mut EventStream, control: &SinkControl) {
    let mut drain = Drain::new();
    let mut window = LazyWindow::default();
    loop {
        let deadline = earliest(sink.write_out_deadline(), window.deadline());
        match drain.next(stream, deadline, control).await {
            Next::Event(event) => {
                window.push_ref(event, |e| sink.write(e));
                if let Some(pace) = stream.pace()
                    && stream.pending() == 0
                {
                    write_out_due_within(pace, &mut window, sink);
                }
            }
            Next::End => {
                window.release(|e| sink.write(e));
                return;
            }
            Next::Due => {
                if window.deadline().is_some_and(|due| due <= Instant::now()) {
                    window.release(|e| sink.write(e));
                }
                sink.flush();
            }
            Next::Flush => {
                window.release(|e| sink.write(e));
                // Everything already queued is written before the bytes go out, and the
                // flush is reported served even after a failure: whoever waits must not wait
                // in vain.
                if let Some(generation) = control.pending_flush() {
                    write_queued(stream, sink);
                    sink.flush();
                    control.flushed(generation);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use giving::{give, given};

    /// Keeps the steps written; nothing is ever due.
    #[derive(Default)]
    struct Steps(Vec<u64>);

    impl FileSink for Steps {
        fn write(&mut self, event: &Event) {
            self.0.push(event.get_as::<u64>("step").unwrap());
        }
        fn flush(&mut self) {}
        fn write_out_deadline(&self) -> Option<Instant> {
            None
        }
    }

    #[test]
    fn a_flush_writes_every_queued_event_across_the_streams_yields() {
        let gv = given();
        let mut stream = gv.stream();
        // Far more than a stream takes before it yields (256 in a row).
        for step in 0..2000u64 {
            give!(step);
        }
        let mut sink = Steps::default();
        write_queued(&mut stream, &mut sink);
        assert_eq!(sink.0, (0..2000).collect::<Vec<_>>());
        gv.finish().unwrap();
    }
}
