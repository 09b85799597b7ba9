//! The channel from probed calls to a [`Probe`](super::Probe) stream: a lock-free queue
//! (crossbeam's `SegQueue`, one allocation per 31 events) and the receiving task's waker. A
//! probed call pushes and wakes; it never allocates a node per event as a linked-list channel
//! does.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use crossbeam_queue::SegQueue;
use futures::Stream;
use futures::task::AtomicWaker;

use crate::Event;

struct Shared {
    queue: SegQueue<Event>,
    waker: AtomicWaker,
    /// No more events will be sent: the stream ends once drained.
    closed: AtomicBool,
    /// The stream was dropped: events have nobody to go to.
    dropped: AtomicBool,
}

/// The probed calls' side.
pub(crate) struct Sender(Arc<Shared>);

/// The stream's side: the events in the order they were sent (per sending thread).
pub(crate) struct Receiver(Arc<Shared>);

/// A new channel.
pub(crate) fn channel() -> (Sender, Receiver) {
    let shared = Arc::new(Shared {
        queue: SegQueue::new(),
        waker: AtomicWaker::new(),
        closed: AtomicBool::new(false),
        dropped: AtomicBool::new(false),
    });
    (Sender(shared.clone()), Receiver(shared))
}

impl Sender {
    /// Sends `event` unless the channel is closed or its stream dropped.
    pub(crate) fn send(&self, event: Event) {
        if self.is_closed() {
            return;
        }
        self.0.queue.push(event);
        self.0.waker.wake();
    }

    /// Whether events sent now would be dropped.
    pub(crate) fn is_closed(&self) -> bool {
        self.0.dropped.load(Ordering::Relaxed) || self.0.closed.load(Ordering::Relaxed)
    }

    /// Ends the stream once the events sent so far are taken.
    pub(crate) fn close(&self) {
        self.0.closed.store(true, Ordering::SeqCst);
        self.0.waker.wake();
    }
}

impl Stream for Receiver {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        if let Some(event) = self.0.queue.pop() {
            return Poll::Ready(Some(event));
        }
        // Spin briefly before parking, as a feed's sole reader does: a loop probed at every call
        // hands its next event over before the stream would have parked, and neither side makes
        // a system call (a park and its wake-up cost microseconds each).
        if crate::sync::spin_until(|| !self.0.queue.is_empty())
            && let Some(event) = self.0.queue.pop()
        {
            return Poll::Ready(Some(event));
        }
        self.0.waker.register(cx.waker());
        // Read `closed` before the queue: an event sent before `close` is then still seen.
        let closed = self.0.closed.load(Ordering::SeqCst);
        match self.0.queue.pop() {
            Some(event) => Poll::Ready(Some(event)),
            None if closed => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::Relaxed);
        // The events nobody will take go now, not with the last sender: a thread's pooled
        // frame may keep the probe (and its sender) until that thread's next probed call.
        while self.0.queue.pop().is_some() {}
    }
}

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
