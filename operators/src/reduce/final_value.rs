use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::future::FusedFuture;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use super::Reducer;

pin_project! {
    /// The final value of a reduction, at completion of the stream.
    ///
    /// `Reduce` is both a [`Future`] (await it for the reducer's output, e.g. `Option<T>`) and a
    /// [`Stream`] of at most one item (compose it further, as Python `giving` and ReactiveX do:
    /// `s.min().map(..)`). Use one or the other, not both.
    #[must_use = "futures and streams do nothing unless polled"]
    pub struct Reduce<S, R> {
        #[pin]
        stream: S,
        reducer: Option<R>,
    }
}

impl<S, R> Reduce<S, R> {
    pub(crate) fn new(stream: S, reducer: R) -> Self {
        Self {
            stream,
            reducer: Some(reducer),
        }
    }
}

impl<S, R> Reduce<S, R>
where
    S: Stream,
    R: Reducer<S::Item>,
{
    fn poll_reduce(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R::Output>> {
        let mut this = self.project();
        let Some(reducer) = this.reducer.as_mut() else {
            return Poll::Ready(None);
        };
        while !reducer.is_done() {
            match ready!(this.stream.as_mut().poll_next(cx)) {
                Some(item) => reducer.push(item),
                None => break,
            }
        }
        Poll::Ready(this.reducer.take().map(R::finish))
    }
}

impl<S, R> Future for Reduce<S, R>
where
    S: Stream,
    R: Reducer<S::Item>,
{
    type Output = R::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R::Output> {
        let output = ready!(self.poll_reduce(cx));
        Poll::Ready(output.expect("`Reduce` polled after it completed"))
    }
}

impl<S, R> Stream for Reduce<S, R>
where
    S: Stream,
    R: Reducer<S::Item>,
{
    type Item = R::Value;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R::Value>> {
        let output = ready!(self.poll_reduce(cx));
        Poll::Ready(output.and_then(R::output_value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.reducer {
            Some(_) => (0, Some(1)),
            None => (0, Some(0)),
        }
    }
}

impl<S, R> FusedFuture for Reduce<S, R>
where
    S: Stream,
    R: Reducer<S::Item>,
{
    fn is_terminated(&self) -> bool {
        self.reducer.is_none()
    }
}

impl<S, R> FusedStream for Reduce<S, R>
where
    S: Stream,
    R: Reducer<S::Item>,
{
    fn is_terminated(&self) -> bool {
        self.reducer.is_none()
    }
}

impl<S: fmt::Debug, R: fmt::Debug> fmt::Debug for Reduce<S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reduce")
            .field("stream", &self.stream)
            .field("reducer", &self.reducer)
            .finish()
    }
}
