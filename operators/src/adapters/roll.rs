use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::roll`](crate::StreamOps::roll).
    #[must_use = "streams do nothing unless polled"]
    pub struct Roll<S: Stream> {
        #[pin]
        stream: S,
        n: usize,
        window: VecDeque<S::Item>,
    }
}

impl<S: Stream> Roll<S> {
    pub(crate) fn new(stream: S, n: usize) -> Self {
        assert!(n > 0, "roll: the window size must be at least 1");
        Self {
            stream,
            n,
            window: VecDeque::with_capacity(n.min(4096)),
        }
    }
}

impl<S> Stream for Roll<S>
where
    S: Stream,
    S::Item: Clone,
{
    type Item = Vec<S::Item>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<S::Item>>> {
        let this = self.project();
        let Some(item) = ready!(this.stream.poll_next(cx)) else {
            return Poll::Ready(None);
        };
        if this.window.len() == *this.n {
            this.window.pop_front();
        }
        this.window.push_back(item);
        Poll::Ready(Some(this.window.iter().cloned().collect()))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.stream.size_hint()
    }
}

impl<S: Stream> fmt::Debug for Roll<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Roll")
            .field("stream", &self.stream)
            .field("n", &self.n)
            .field("window", &self.window.len())
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for Roll<S>
where
    S: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
