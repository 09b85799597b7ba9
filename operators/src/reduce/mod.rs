//! Reductions: a final value at completion, a running value at every item, or the value over a
//! rolling window of the last `n` items.
//!
//! Every reduction is a [`Reducer`]; [`StreamOps`](crate::StreamOps) wraps it in a [`Reduce`]
//! (final value) or a [`Running`] (running and rolling variants). The reducers are public so that
//! a custom one can be used with [`StreamOps::reduce_with`](crate::StreamOps::reduce_with) and
//! [`StreamOps::running_with`](crate::StreamOps::running_with).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::future::FusedFuture;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

mod extremum;
mod generic;
mod moments;
mod numeric;
mod sum;
mod top;

pub use extremum::{
    ByKey, Compare, Extremum, Max, Min, Natural, RollingExtremum, RollingMax, RollingMin,
};
pub use generic::{Count, ElementAt, First, Fold, Last, ReduceFn, RollingCount, RollingReduce};
pub use moments::{
    Average, AverageVariance, RollingAverage, RollingAverageVariance, RollingVariance, Spread,
    Variance,
};
pub use numeric::Numeric;
pub use sum::{RollingSum, Sum};
pub use top::{RollingTop, Top};

/// An incremental reduction of a stream of `T`.
///
/// A reducer is fed every item with [`push`](Reducer::push). Its current value is read with
/// [`value`](Reducer::value) after every item by the running and rolling variants, and once at
/// completion with [`finish`](Reducer::finish) by the final variant.
pub trait Reducer<T> {
    /// The value emitted by the running and rolling variants, and by the one-item stream of a
    /// [`Reduce`].
    type Value;
    /// What awaiting a [`Reduce`] gives: `Option<Self::Value>` for most reducers (`None` for an
    /// empty stream), a plain value where an empty stream has a natural answer (`count` → `0`).
    type Output;

    /// Feeds one item.
    fn push(&mut self, item: T);

    /// The current value, if any (`None` while nothing comparable has been seen yet). The
    /// running and rolling variants emit nothing for an item after which the value is `None`.
    fn value(&mut self) -> Option<Self::Value>;

    /// The final value, once the stream has completed (or [`is_done`](Reducer::is_done)).
    fn finish(self) -> Self::Output;

    /// The final output as the one item of the stream form of [`Reduce`] (`None`: no item).
    fn output_value(output: Self::Output) -> Option<Self::Value>;

    /// `true` once no further item can change the final value (`first`, `element_at`): the
    /// final variant then stops polling the stream and completes early.
    fn is_done(&self) -> bool {
        false
    }
}

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

/// Panics with a clear message when a window size is zero.
pub(crate) fn check_window(n: usize, what: &str) {
    assert!(n > 0, "{what}: the window size must be at least 1, got 0");
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

impl<S, R> FusedStream for Running<S, R>
where
    S: FusedStream,
    R: Reducer<S::Item>,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
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

impl<S: fmt::Debug, R: fmt::Debug> fmt::Debug for Running<S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running")
            .field("stream", &self.stream)
            .field("reducer", &self.reducer)
            .finish()
    }
}
