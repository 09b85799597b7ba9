use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::combine_latest`](crate::StreamOps::combine_latest).
    #[must_use = "streams do nothing unless polled"]
    pub struct CombineLatest<A: Stream, B: Stream> {
        #[pin]
        a: A,
        #[pin]
        b: B,
        latest_a: Option<A::Item>,
        latest_b: Option<B::Item>,
        a_done: bool,
        b_done: bool,
        b_first: bool,
    }
}

impl<A: Stream, B: Stream> CombineLatest<A, B> {
    pub(crate) fn new(a: A, b: B) -> Self {
        Self {
            a,
            b,
            latest_a: None,
            latest_b: None,
            a_done: false,
            b_done: false,
            b_first: false,
        }
    }
}

impl<A, B> Stream for CombineLatest<A, B>
where
    A: Stream,
    B: Stream,
    A::Item: Clone,
    B::Item: Clone,
{
    type Item = (A::Item, B::Item);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        // Alternate which side is polled first, so that a busy side cannot starve the other.
        *this.b_first = !*this.b_first;
        loop {
            let mut progressed = false;
            for side_b in [*this.b_first, !*this.b_first] {
                let updated = if side_b {
                    poll_side(this.b.as_mut(), this.latest_b, this.b_done, cx)
                } else {
                    poll_side(this.a.as_mut(), this.latest_a, this.a_done, cx)
                };
                progressed |= updated;
                if updated && let (Some(a), Some(b)) = (&this.latest_a, &this.latest_b) {
                    return Poll::Ready(Some((a.clone(), b.clone())));
                }
            }
            // Completes when both sides have, or when one side completed without ever
            // emitting (no pair can ever be formed), as ReactiveX.
            let never_a = *this.a_done && this.latest_a.is_none();
            let never_b = *this.b_done && this.latest_b.is_none();
            if (*this.a_done && *this.b_done) || never_a || never_b {
                return Poll::Ready(None);
            }
            if !progressed {
                return Poll::Pending;
            }
        }
    }
}

/// Polls one side once; `true` if it produced a new latest value.
fn poll_side<S: Stream>(
    stream: Pin<&mut S>,
    latest: &mut Option<S::Item>,
    done: &mut bool,
    cx: &mut Context<'_>,
) -> bool {
    if *done {
        return false;
    }
    match stream.poll_next(cx) {
        Poll::Ready(Some(item)) => {
            *latest = Some(item);
            true
        }
        Poll::Ready(None) => {
            *done = true;
            false
        }
        Poll::Pending => false,
    }
}

impl<A: Stream, B: Stream> fmt::Debug for CombineLatest<A, B>
where
    A: fmt::Debug,
    B: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CombineLatest")
            .field("a", &self.a)
            .field("b", &self.b)
            .field("a_done", &self.a_done)
            .field("b_done", &self.b_done)
            .finish_non_exhaustive()
    }
}

impl<A: Stream, B: Stream> FusedStream for CombineLatest<A, B>
where
    A: Stream,
    B: Stream,
    A::Item: Clone,
    B::Item: Clone,
{
    fn is_terminated(&self) -> bool {
        // As `poll_next`: both sides done, or one done without ever giving a value.
        let a_over = self.a_done && (self.b_done || self.latest_a.is_none());
        a_over || (self.b_done && self.latest_b.is_none())
    }
}
