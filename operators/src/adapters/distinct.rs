use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::distinct`](crate::StreamOps::distinct) and
    /// [`StreamOps::distinct_by_key`](crate::StreamOps::distinct_by_key).
    #[must_use = "streams do nothing unless polled"]
    pub struct Distinct<S, F, K> {
        #[pin]
        stream: S,
        key: F,
        seen: HashSet<K>,
    }
}

/// Stream for [`StreamOps::distinct`](crate::StreamOps::distinct): a [`Distinct`] whose key is
/// a clone of the item itself.
pub type DistinctItems<S> =
    Distinct<S, fn(&<S as Stream>::Item) -> <S as Stream>::Item, <S as Stream>::Item>;

impl<S, F, K> Distinct<S, F, K> {
    pub(crate) fn new(stream: S, key: F) -> Self {
        Self {
            stream,
            key,
            seen: HashSet::new(),
        }
    }
}

impl<S, F, K> Stream for Distinct<S, F, K>
where
    S: Stream,
    F: FnMut(&S::Item) -> K,
    K: Hash + Eq,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            if this.seen.insert((this.key)(&item)) {
                return Poll::Ready(Some(item));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.stream.size_hint().1)
    }
}

impl<S, F, K> fmt::Debug for Distinct<S, F, K>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Distinct")
            .field("stream", &self.stream)
            .field("seen", &self.seen.len())
            .finish_non_exhaustive()
    }
}

impl<S, F, K> FusedStream for Distinct<S, F, K>
where
    S: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
