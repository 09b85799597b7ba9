use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::pairwise`](crate::StreamOps::pairwise).
    #[must_use = "streams do nothing unless polled"]
    pub struct Pairwise<S: Stream> {
        #[pin]
        stream: S,
        previous: Option<S::Item>,
    }
}

impl<S: Stream> Pairwise<S> {
    pub(crate) fn new(stream: S) -> Self {
        Self {
            stream,
            previous: None,
        }
    }
}

impl<S> Stream for Pairwise<S>
where
    S: Stream,
    S::Item: Clone,
{
    type Item = (S::Item, S::Item);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            if let Some(previous) = this.previous.replace(item.clone()) {
                return Poll::Ready(Some((previous, item)));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (low, high) = self.stream.size_hint();
        let held = usize::from(self.previous.is_some());
        let pairs = |n: usize| (n + held).saturating_sub(1);
        (pairs(low), high.map(pairs))
    }
}

impl<S: Stream> fmt::Debug for Pairwise<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pairwise")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for Pairwise<S>
where
    S: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
