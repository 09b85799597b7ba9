use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for
    /// [`StreamOps::distinct_until_changed_by_key`](crate::StreamOps::distinct_until_changed_by_key).
    #[must_use = "streams do nothing unless polled"]
    pub struct DistinctUntilChangedBy<S, F, K> {
        #[pin]
        stream: S,
        key: F,
        last: Option<K>,
    }
}

impl<S, F, K> DistinctUntilChangedBy<S, F, K> {
    pub(crate) fn new(stream: S, key: F) -> Self {
        Self {
            stream,
            key,
            last: None,
        }
    }
}

impl<S, F, K> Stream for DistinctUntilChangedBy<S, F, K>
where
    S: Stream,
    F: FnMut(&S::Item) -> K,
    K: PartialEq,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            let key = (this.key)(&item);
            if this.last.as_ref() != Some(&key) {
                *this.last = Some(key);
                return Poll::Ready(Some(item));
            }
        }
    }
}

impl<S, F, K> FusedStream for DistinctUntilChangedBy<S, F, K>
where
    S: FusedStream,
    F: FnMut(&S::Item) -> K,
    K: PartialEq,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}

impl<S: fmt::Debug, F, K> fmt::Debug for DistinctUntilChangedBy<S, F, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistinctUntilChangedBy")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}
