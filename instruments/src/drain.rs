//! What a sink thread waits for next: an event, the end of its scope, the time to write its
//! buffer out, or a flush request. Shared by the sinks that write files as they go (the
//! MessagePack log, the trace), so they serve flushes and deadlines alike.

use std::time::Instant;

use futures::{FutureExt, StreamExt};
use giving::{Event, EventStream};

use crate::threaded::SinkControl;
use crate::window::{LazyWindow, earliest};

/// How many events a sink takes as they come, without a timer and without looking for a
/// flush request: under load a timer per event would cost more than writing it, and a request
/// waits for at most this many events.
const BURST: u32 = 64;

/// What a sink thread waits for.
enum Next {
    /// An event to write.
    Event(Event),
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

    async fn next(
        &mut self,
        stream: &mut EventStream,
        deadline: Option<Instant>,
        control: &SinkControl,
    ) -> Next {
        if self.burst < BURST
            && let Some(next) = stream.next().now_or_never()
        {
            self.burst += 1;
            return next.map_or(Next::End, Next::Event);
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
async fn next_event(stream: &mut EventStream, deadline: Option<Instant>) -> Next {
    let next = match deadline {
        Some(deadline) => {
            let deadline = tokio::time::Instant::from_std(deadline);
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Ok(next) => next,
                Err(_) => return Next::Due,
            }
        }
        None => stream.next().await,
    };
    next.map_or(Next::End, Next::Event)
}

/// Every event already queued, for a flush: written before the bytes go out.
fn queued(stream: &mut EventStream) -> impl Iterator<Item = Event> + '_ {
    std::iter::from_fn(move || stream.next().now_or_never().flatten())
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

/// Drives `sink` until its scope ends: events as they come, lazy values read once per sync
/// window ([`LazyWindow`]), bytes written out when due, flushes served when asked.
pub(crate) async fn run(sink: &mut impl FileSink, stream: &mut EventStream, control: &SinkControl) {
    let mut drain = Drain::new();
    let mut window = LazyWindow::default();
    loop {
        let deadline = earliest(sink.write_out_deadline(), window.deadline());
        match drain.next(stream, deadline, control).await {
            Next::Event(event) => window.push(event, |e| sink.write(e)),
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
                    for event in queued(stream) {
                        sink.write(&event);
                    }
                    sink.flush();
                    control.flushed(generation);
                }
            }
        }
    }
}
