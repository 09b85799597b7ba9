//! The channel from probed calls to a [`Probe`](super::Probe) stream: a [`Feed`] with one
//! reader, the log a scope's lossless subscribers read. A probed call appends under the feed's
//! lock (one allocation per 256 events, no fence, and a wake-up only when the stream is
//! parked); the stream reads in place and spins briefly before it parks, as a scope's sole
//! subscriber does.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures::Stream;

use crate::Event;
use crate::feed::{Feed, FeedReader, NO_SKIP};

struct Shared {
    feed: Arc<Feed>,
    /// The probe ended (its scope finished, or it was unregistered): nothing more is sent.
    closed: AtomicBool,
}

/// The probed calls' end: sends events until the probe closes or its stream is dropped.
pub(crate) struct Sender(Arc<Shared>);

/// The stream's end: the feed's one reader.
pub(crate) struct Receiver(FeedReader);

/// A new channel: the receiver reads every event sent after this call.
pub(crate) fn channel() -> (Sender, Receiver) {
    let feed = Arc::new(Feed::new());
    let reader = feed.subscribe();
    let shared = Arc::new(Shared {
        feed,
        closed: AtomicBool::new(false),
    });
    (Sender(shared), Receiver(reader))
}

impl Sender {
    /// Sends `event`, unless the probe has closed or its stream is gone.
    pub(crate) fn send(&self, event: Event) {
        if self.is_closed() {
            return;
        }
        self.0.feed.push(event, NO_SKIP);
    }

    /// Whether sending is pointless: the probe closed, or its stream was dropped (the feed
    /// has no reader left).
    pub(crate) fn is_closed(&self) -> bool {
        self.0.closed.load(Ordering::Relaxed) || !self.0.feed.has_readers()
    }

    /// Ends the stream once it has taken what was sent before.
    pub(crate) fn close(&self) {
        self.0.closed.store(true, Ordering::Relaxed);
        self.0.feed.close();
    }
}

impl Stream for Receiver {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let reader = &mut self.get_mut().0;
        reader
            .poll_advance(cx, None)
            .map(|taken| taken.then(|| reader.take_current()))
    }
}

// Dropping the receiver drops its feed reader: the feed then has no reader (the sender sees
// it closed) and its chunks, with the events nobody will take, are freed at once, not with the
// last sender (a thread's pooled frame may keep the probe until that thread's next probed call).

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use futures::executor::block_on;

    #[test]
    fn events_come_in_order_and_the_stream_ends_after_close() {
        let (sender, receiver) = channel();
        for i in 0..100_u64 {
            sender.send(crate::event!(i));
        }
        sender.close();
        sender.send(crate::event!(late = 1));
        let received: Vec<u64> =
            block_on(receiver.map(|e| e.get_as::<u64>("i").unwrap()).collect());
        assert_eq!(received, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn a_dropped_stream_closes_the_sender() {
        let (sender, receiver) = channel();
        assert!(!sender.is_closed());
        drop(receiver);
        assert!(sender.is_closed());
    }

    #[test]
    fn a_waiting_stream_wakes_on_send_from_another_thread() {
        let (sender, receiver) = channel();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            sender.send(crate::event!(x = 1));
            sender.close();
        });
        let received: Vec<Event> = block_on(receiver.collect());
        thread.join().unwrap();
        assert_eq!(received.len(), 1);
    }
}
