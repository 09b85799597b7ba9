use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::with_latest_from`](crate::StreamOps::with_latest_from).
    #[must_use = "streams do nothing unless polled"]
    pub struct WithLatestFrom<A, B: Stream> {
        #[pin]
        stream: A,
        #[pin]
        other: B,
        latest: Option<B::Item>,
        other_done: bool,
    }
}

impl<A, B: Stream> WithLatestFrom<A, B> {
    pub(crate) fn new(stream: A, other: B) -> Self {
        Self {
            stream,
            other,
            latest: None,
            other_done: false,
        }
    }
}

impl<A, B> Stream for WithLatestFrom<A, B>
where
    A: Stream,
    B: Stream,
    B::Item: Clone,
{
    type Item = (A::Item, B::Item);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            // Take in everything `other` has ready first, so that an item of `self` pairs with
            // the latest value given before it.
            while !*this.other_done {
                match this.other.as_mut().poll_next(cx) {
                    Poll::Ready(Some(item)) => *this.latest = Some(item),
                    Poll::Ready(None) => *this.other_done = true,
                    Poll::Pending => break,
                }
            }
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            if let Some(latest) = this.latest.as_ref() {
                return Poll::Ready(Some((item, latest.clone())));
            }
            // Items of `self` before any value of `other` are dropped.
        }
    }
}

impl<A, B: Stream> fmt::Debug for WithLatestFrom<A, B>
where
    A: fmt::Debug,
    B: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithLatestFrom")
            .field("stream", &self.stream)
            .field("other", &self.other)
            .field("other_done", &self.other_done)
            .finish_non_exhaustive()
    }
}

impl<A, B: Stream> FusedStream for WithLatestFrom<A, B>
where
    A: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
