use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::take_last`](crate::StreamOps::take_last) and
    /// [`StreamOps::skip_last`](crate::StreamOps::skip_last): holds the last `n` items back.
    #[must_use = "streams do nothing unless polled"]
    pub struct HoldLast<S: Stream> {
        #[pin]
        stream: S,
        n: usize,
        held: VecDeque<S::Item>,
        // true: emit the held items at the end (take_last); false: emit what leaves the window
        // as it goes and drop the held ones at the end (skip_last).
        take: bool,
        done: bool,
    }
}

impl<S: Stream> HoldLast<S> {
    pub(crate) fn take(stream: S, n: usize) -> Self {
        Self::new(stream, n, true)
    }

    pub(crate) fn skip(stream: S, n: usize) -> Self {
        Self::new(stream, n, false)
    }

    fn new(stream: S, n: usize, take: bool) -> Self {
        Self {
            stream,
            n,
            held: VecDeque::with_capacity(n.min(4096)),
            take,
            done: false,
        }
    }
}

impl<S: Stream> Stream for HoldLast<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        while !*this.done {
            match ready!(this.stream.as_mut().poll_next(cx)) {
                Some(item) => {
                    this.held.push_back(item);
                    if this.held.len() > *this.n {
                        let oldest = this.held.pop_front();
                        if !*this.take {
                            return Poll::Ready(oldest);
                        }
                    }
                }
                None => {
                    *this.done = true;
                    if !*this.take {
                        this.held.clear();
                    }
                }
            }
        }
        Poll::Ready(this.held.pop_front())
    }
}

impl<S: Stream> FusedStream for HoldLast<S> {
    fn is_terminated(&self) -> bool {
        self.done && self.held.is_empty()
    }
}

impl<S: Stream + fmt::Debug> fmt::Debug for HoldLast<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HoldLast")
            .field("stream", &self.stream)
            .field("n", &self.n)
            .field("held", &self.held.len())
            .field("take", &self.take)
            .field("done", &self.done)
            .finish()
    }
}
