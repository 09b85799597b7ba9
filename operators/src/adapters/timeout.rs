use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

/// The error of [`StreamOps::timeout`](crate::StreamOps::timeout): no item arrived within the
/// period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed {
    period: Duration,
}

impl Elapsed {
    /// The period that elapsed without an item.
    pub fn period(&self) -> Duration {
        self.period
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no item within {:?}", self.period)
    }
}

impl std::error::Error for Elapsed {}

pin_project! {
    /// Stream for [`StreamOps::timeout`](crate::StreamOps::timeout).
    #[must_use = "streams do nothing unless polled"]
    pub struct Timeout<S> {
        #[pin]
        stream: S,
        period: Duration,
        // Created at the first poll, so that the operator can be built outside a runtime.
        sleep: Option<Pin<Box<Sleep>>>,
        done: bool,
    }
}

impl<S> Timeout<S> {
    pub(crate) fn new(stream: S, period: Duration) -> Self {
        Self {
            stream,
            period,
            sleep: None,
            done: false,
        }
    }
}

impl<S: Stream> Stream for Timeout<S> {
    type Item = Result<S::Item, Elapsed>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        let period = *this.period;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(period)));
        match this.stream.poll_next(cx) {
            Poll::Ready(Some(item)) => {
                sleep.as_mut().reset(Instant::now() + period);
                Poll::Ready(Some(Ok(item)))
            }
            Poll::Ready(None) => {
                *this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => {
                if sleep.as_mut().poll(cx).is_ready() {
                    *this.done = true;
                    Poll::Ready(Some(Err(Elapsed { period })))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl<S> fmt::Debug for Timeout<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("stream", &self.stream)
            .field("period", &self.period)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S> FusedStream for Timeout<S>
where
    S: Stream,
{
    fn is_terminated(&self) -> bool {
        self.done
    }
}
