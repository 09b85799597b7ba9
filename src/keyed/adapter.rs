use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

/// One step of a keyed operator: turns an input item into at most one output item.
///
/// Every keyed operator is a `KeyedOp` run by [`Keyed`]; the types that implement it (such as
/// [`Where`](super::Where) or [`Keep`](super::Keep)) hold the operator's configuration.
pub trait KeyedOp<In> {
    /// What the operator emits.
    type Out;

    /// The output for `item`, or `None` to skip it.
    fn apply(&mut self, item: In) -> Option<Self::Out>;
}

pin_project! {
    /// Stream of a keyed operator on [`EventStreamOps`](super::EventStreamOps): runs its
    /// [`KeyedOp`] on every item of the upstream.
    #[must_use = "streams do nothing unless polled"]
    pub struct Keyed<S, Op> {
        #[pin]
        stream: S,
        op: Op,
    }
}

impl<S, Op> Keyed<S, Op> {
    pub(crate) fn new(stream: S, op: Op) -> Self {
        Self { stream, op }
    }
}

impl<S, Op> Stream for Keyed<S, Op>
where
    S: Stream,
    Op: KeyedOp<S::Item>,
{
    type Item = Op::Out;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Op::Out>> {
        let this = self.project();
        let op = this.op;
        poll_step(this.stream, cx, |item| op.apply(item))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.stream.size_hint().1)
    }
}

/// The step loop of the keyed adapters: polls `stream` and hands each item to `step` until
/// `step` returns an output (`Ready(Some)`), the upstream completes (`Ready(None)`) or it is
/// pending. An item that `step` drops is followed at once by the next one, without a round
/// trip through the executor. [`Keyed`] runs its [`KeyedOp`] with it; the adapters that keep
/// more state than a `KeyedOp` can ([`KFlatten`](super::KFlatten),
/// [`KGroupBy`](super::KGroupBy), [`DisplayEvents`](super::DisplayEvents)) call it directly.
pub(crate) fn poll_step<S: Stream + ?Sized, T>(
    mut stream: Pin<&mut S>,
    cx: &mut Context<'_>,
    mut step: impl FnMut(S::Item) -> Option<T>,
) -> Poll<Option<T>> {
    loop {
        match ready!(stream.as_mut().poll_next(cx)) {
            Some(item) => {
                if let Some(out) = step(item) {
                    return Poll::Ready(Some(out));
                }
            }
            None => return Poll::Ready(None),
        }
    }
}

impl<S, Op> FusedStream for Keyed<S, Op>
where
    S: FusedStream,
    Op: KeyedOp<S::Item>,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}

impl<S: fmt::Debug, Op: fmt::Debug> fmt::Debug for Keyed<S, Op> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyed")
            .field("stream", &self.stream)
            .field("op", &self.op)
            .finish()
    }
}
