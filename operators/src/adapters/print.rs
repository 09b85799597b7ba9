use std::fmt::{self, Display};
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use pin_project_lite::pin_project;

pin_project! {
    /// Future for [`StreamOps::print`](crate::StreamOps::print).
    #[must_use = "futures do nothing unless awaited"]
    pub struct Print<S> {
        #[pin]
        stream: S,
    }
}

impl<S> Print<S> {
    pub(crate) fn new(stream: S) -> Self {
        Self { stream }
    }
}

impl<S> Future for Print<S>
where
    S: Stream,
    S::Item: Display,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        while let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) {
            // A closed stdout (`| head`) must not kill the pipeline: the print is best effort.
            let _ = writeln!(std::io::stdout().lock(), "{item}");
        }
        Poll::Ready(())
    }
}

impl<S> fmt::Debug for Print<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Print")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}
