use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use pin_project_lite::pin_project;

use super::adapter::poll_step;
use crate::Event;

pin_project! {
    /// Future of [`display`](super::EventStreamOps::display).
    #[must_use = "futures do nothing unless awaited"]
    pub struct DisplayEvents<S> {
        #[pin]
        stream: S,
    }
}

impl<S> DisplayEvents<S> {
    pub(crate) fn new(stream: S) -> Self {
        Self { stream }
    }
}

impl<S: Stream<Item = Event>> Future for DisplayEvents<S> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        // A sink: every event is a step with no output, until the upstream completes.
        let _: Option<Infallible> = ready!(poll_step(this.stream, cx, |event| {
            let mut out = std::io::stdout().lock();
            // A closed stdout (`| head`) must not kill the pipeline: display is best effort.
            let _ = match event.origin() {
                Some(origin) => writeln!(out, "[{origin}] {event}"),
                None => writeln!(out, "{event}"),
            };
            None
        }));
        Poll::Ready(())
    }
}

impl<S: fmt::Debug> fmt::Debug for DisplayEvents<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DisplayEvents")
            .field("stream", &self.stream)
            .finish()
    }
}
