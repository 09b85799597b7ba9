use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
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
