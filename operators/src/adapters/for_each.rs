use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use pin_project_lite::pin_project;

pin_project! {
    /// Future for [`StreamOps::for_each`](crate::StreamOps::for_each).
    #[must_use = "futures do nothing unless awaited"]
    pub struct ForEach<S, F> {
        #[pin]
        stream: S,
        f: F,
    }
}

impl<S, F> ForEach<S, F> {
    pub(crate) fn new(stream: S, f: F) -> Self {
        Self { stream, f }
    }
}

impl<S, F> Future for ForEach<S, F>
where
    S: Stream,
    F: FnMut(S::Item),
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        while let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) {
            (this.f)(item);
        }
        Poll::Ready(())
    }
}

impl<S, F> fmt::Debug for ForEach<S, F>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForEach")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}
