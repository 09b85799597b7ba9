use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::distinct_until_changed`](crate::StreamOps::distinct_until_changed).
    #[must_use = "streams do nothing unless polled"]
    pub struct DistinctUntilChanged<S: Stream> {
        #[pin]
        stream: S,
        last: Option<S::Item>,
    }
}

impl<S: Stream> DistinctUntilChanged<S> {
    pub(crate) fn new(stream: S) -> Self {
        Self { stream, last: None }
    }
}

impl<S> Stream for DistinctUntilChanged<S>
where
    S: Stream,
    S::Item: PartialEq + Clone,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            if this.last.as_ref() != Some(&item) {
                *this.last = Some(item.clone());
                return Poll::Ready(Some(item));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.stream.size_hint().1)
    }
}

impl<S: Stream> fmt::Debug for DistinctUntilChanged<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistinctUntilChanged")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for DistinctUntilChanged<S>
where
    S: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
