use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use super::at_end::python_slice;

pin_project! {
    /// Stream for [`StreamOps::slice_by`](crate::StreamOps::slice_by): Python's
    /// `items[start:stop:step]`. With non-negative indices it streams (and completes at
    /// `stop` without polling further); a negative index counts from the end, which is known
    /// only at completion, so then the items are collected first.
    #[must_use = "streams do nothing unless polled"]
    pub struct SliceBy<S: Stream> {
        #[pin]
        stream: S,
        start: Option<isize>,
        stop: Option<isize>,
        step: usize,
        index: usize,
        // Collecting mode (a negative index): the items so far, then what is left to emit.
        items: Vec<S::Item>,
        out: Option<std::vec::IntoIter<S::Item>>,
        done: bool,
    }
}

impl<S: Stream> SliceBy<S> {
    pub(crate) fn new(stream: S, start: Option<isize>, stop: Option<isize>, step: usize) -> Self {
        Self {
            stream,
            start,
            stop,
            step: step.max(1),
            index: 0,
            items: Vec::new(),
            out: None,
            done: false,
        }
    }

    fn collects(&self) -> bool {
        self.start.is_some_and(|s| s < 0) || self.stop.is_some_and(|s| s < 0)
    }
}

impl<S: Stream> Stream for SliceBy<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        if self.collects() {
            let mut this = self.project();
            while this.out.is_none() {
                match ready!(this.stream.as_mut().poll_next(cx)) {
                    Some(item) => this.items.push(item),
                    None => {
                        let items = std::mem::take(this.items);
                        let sliced = python_slice(items, *this.start, *this.stop, *this.step);
                        *this.out = Some(sliced.into_iter());
                    }
                }
            }
            let next = this.out.as_mut().and_then(Iterator::next);
            *this.done = next.is_none();
            return Poll::Ready(next);
        }
        let start = self.start.unwrap_or(0) as usize;
        let stop = self.stop.map(|s| s as usize);
        let mut this = self.as_mut().project();
        loop {
            if *this.done || stop.is_some_and(|stop| *this.index >= stop) {
                *this.done = true;
                return Poll::Ready(None);
            }
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                *this.done = true;
                return Poll::Ready(None);
            };
            let index = *this.index;
            *this.index += 1;
            if index >= start && (index - start).is_multiple_of(*this.step) {
                return Poll::Ready(Some(item));
            }
        }
    }
}

impl<S: Stream> FusedStream for SliceBy<S> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<S: Stream + fmt::Debug> fmt::Debug for SliceBy<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SliceBy")
            .field("stream", &self.stream)
            .field("start", &self.start)
            .field("stop", &self.stop)
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}
