use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use super::Reducer;

pin_project! {
    /// The running (or rolling-window) value of a reduction, emitted after every item.
    ///
    /// Emits nothing for an item after which the reducer has no value (e.g. a running `min` that
    /// has only seen NaN so far).
    #[must_use = "streams do nothing unless polled"]
    pub struct Running<S, R> {
        #[pin]
        stream: S,
        reducer: R,
    }
}

impl<S, R> Running<S, R> {
    pub(crate) fn new(stream: S, reducer: R) -> Self {
        Self { stream, reducer }
    }
}

impl<S, R> Stream for Running<S, R>
where
    S: Stream,
    R: Reducer<S::Item>,
{
    type Item = R::Value;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R::Value>> {
        let mut this = self.project();
        loop {
            match ready!(this.stream.as_mut().poll_next(cx)) {
                Some(item) => {
                    this.reducer.push(item);
                    if let Some(value) = this.reducer.value() {
                        return Poll::Ready(Some(value));
                    }
                }
                None => return Poll::Ready(None),
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.stream.size_hint().1)
    }
}

impl<S, R> FusedStream for Running<S, R>
where
    S: FusedStream,
    R: Reducer<S::Item>,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}

impl<S: fmt::Debug, R: fmt::Debug> fmt::Debug for Running<S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running")
            .field("stream", &self.stream)
            .field("reducer", &self.reducer)
            .finish()
    }
}
