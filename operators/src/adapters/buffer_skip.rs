use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::buffer_skip`](crate::StreamOps::buffer_skip).
    #[must_use = "streams do nothing unless polled"]
    pub struct BufferSkip<S: Stream> {
        #[pin]
        stream: S,
        count: usize,
        skip: usize,
        phase: usize,
        open: VecDeque<Vec<S::Item>>,
        done: bool,
    }
}

impl<S: Stream> BufferSkip<S> {
    pub(crate) fn new(stream: S, count: usize, skip: usize) -> Self {
        assert!(count > 0, "buffer_skip: the count must be at least 1");
        assert!(skip > 0, "buffer_skip: the skip must be at least 1");
        Self {
            stream,
            count,
            skip,
            phase: 0,
            open: VecDeque::new(),
            done: false,
        }
    }
}

impl<S> Stream for BufferSkip<S>
where
    S: Stream,
    S::Item: Clone,
{
    type Item = Vec<S::Item>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<S::Item>>> {
        let mut this = self.project();
        while !*this.done {
            match ready!(this.stream.as_mut().poll_next(cx)) {
                Some(item) => {
                    // `phase` is the item's index modulo `skip`: a buffer opens at phase 0.
                    if *this.phase == 0 {
                        this.open
                            .push_back(Vec::with_capacity((*this.count).min(4096)));
                    }
                    *this.phase = (*this.phase + 1) % *this.skip;
                    for buf in this.open.iter_mut() {
                        buf.push(item.clone());
                    }
                    // Buffers start at distinct items, so at most one is full.
                    if this.open.front().is_some_and(|b| b.len() == *this.count) {
                        return Poll::Ready(this.open.pop_front());
                    }
                }
                None => *this.done = true,
            }
        }
        // Completion flushes the open (partial) buffers, oldest first.
        Poll::Ready(this.open.pop_front())
    }
}

impl<S: Stream> fmt::Debug for BufferSkip<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferSkip")
            .field("stream", &self.stream)
            .field("count", &self.count)
            .field("skip", &self.skip)
            .field("open", &self.open.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for BufferSkip<S>
where
    S: Stream,
    S::Item: Clone,
{
    fn is_terminated(&self) -> bool {
        self.done && self.open.is_empty()
    }
}
