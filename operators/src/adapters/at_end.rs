use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream of the operators that need every item before they can emit any
    /// ([`sort`](crate::StreamOps::sort), [`sort_by_key`](crate::StreamOps::sort_by_key),
    /// [`slice_by`](crate::StreamOps::slice_by) with negative indices): collects the upstream,
    /// then emits `finish(items)` in order.
    #[must_use = "streams do nothing unless polled"]
    pub struct AtEnd<S: Stream, F> {
        #[pin]
        stream: S,
        items: Vec<S::Item>,
        finish: Option<F>,
        out: std::vec::IntoIter<S::Item>,
    }
}

/// Stream for [`StreamOps::sort`](crate::StreamOps::sort): an [`AtEnd`] that sorts the items.
pub type Sort<S> = AtEnd<S, fn(Vec<<S as Stream>::Item>) -> Vec<<S as Stream>::Item>>;

/// Stream for [`StreamOps::sort_by_key`](crate::StreamOps::sort_by_key): an [`AtEnd`] that
/// sorts the items by a key. The sorting closure is boxed, so the key function's type does not
/// appear in the name.
pub type SortByKey<S> =
    AtEnd<S, Box<dyn FnOnce(Vec<<S as Stream>::Item>) -> Vec<<S as Stream>::Item> + Send>>;

impl<S: Stream, F> AtEnd<S, F>
where
    F: FnOnce(Vec<S::Item>) -> Vec<S::Item>,
{
    pub(crate) fn new(stream: S, finish: F) -> Self {
        Self {
            stream,
            items: Vec::new(),
            finish: Some(finish),
            out: Vec::new().into_iter(),
        }
    }
}

impl<S: Stream, F> Stream for AtEnd<S, F>
where
    F: FnOnce(Vec<S::Item>) -> Vec<S::Item>,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        while this.finish.is_some() {
            match ready!(this.stream.as_mut().poll_next(cx)) {
                Some(item) => this.items.push(item),
                None => {
                    if let Some(finish) = this.finish.take() {
                        *this.out = finish(std::mem::take(this.items)).into_iter();
                    }
                }
            }
        }
        Poll::Ready(this.out.next())
    }
}

impl<S: Stream, F> FusedStream for AtEnd<S, F>
where
    F: FnOnce(Vec<S::Item>) -> Vec<S::Item>,
{
    fn is_terminated(&self) -> bool {
        self.finish.is_none() && self.out.len() == 0
    }
}

impl<S: Stream + fmt::Debug, F> fmt::Debug for AtEnd<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtEnd")
            .field("stream", &self.stream)
            .field("collected", &self.items.len())
            .field("finished", &self.finish.is_none())
            .finish_non_exhaustive()
    }
}

/// Python's slice semantics on a collected list: negative indices count from the end, the
/// step is at least 1.
pub(crate) fn python_slice<T>(
    items: Vec<T>,
    start: Option<isize>,
    stop: Option<isize>,
    step: usize,
) -> Vec<T> {
    let len = items.len() as isize;
    let resolve = |index: isize| {
        if index < 0 {
            (len + index).max(0)
        } else {
            index.min(len)
        }
    };
    let start = start.map_or(0, resolve) as usize;
    let stop = stop.map_or(len, resolve) as usize;
    let step = step.max(1);
    items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i >= start && *i < stop && (i - start).is_multiple_of(step))
        .map(|(_, item)| item)
        .collect()
}
