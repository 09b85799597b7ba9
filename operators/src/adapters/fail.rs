use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::future::FusedFuture;
use pin_project_lite::pin_project;

/// Why a check failed: its message, and the item that failed it (shown with `Debug`), if one
/// did ([`fail_if_empty`](crate::StreamOps::fail_if_empty) fails for the lack of one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFailed {
    /// The check's message.
    pub message: String,
    /// The item that failed the check, as `Debug` shows it.
    pub item: Option<String>,
}

impl fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.item {
            Some(item) => write!(f, "{}: {item}", self.message),
            None => write!(f, "{} (no item)", self.message),
        }
    }
}

impl std::error::Error for CheckFailed {}

pin_project! {
    /// Future of the checks ([`fail`](crate::StreamOps::fail),
    /// [`fail_if`](crate::StreamOps::fail_if),
    /// [`fail_if_false`](crate::StreamOps::fail_if_false),
    /// [`fail_if_empty`](crate::StreamOps::fail_if_empty)): `Err` at the first item that fails
    /// (without waiting for the stream to end), else `Ok(())` at completion.
    #[must_use = "futures do nothing unless awaited"]
    pub struct Check<S, P> {
        #[pin]
        stream: S,
        fails: P,
        message: String,
        must_see_items: bool,
        seen: bool,
        done: bool,
    }
}

/// Future of [`fail`](crate::StreamOps::fail) and
/// [`fail_if_empty`](crate::StreamOps::fail_if_empty): a [`Check`] whose test ignores the item
/// (the first item fails it, or none does).
pub type Fail<S> = Check<S, fn(&<S as Stream>::Item) -> bool>;

/// Future of [`fail_if_false`](crate::StreamOps::fail_if_false): a [`Check`] of a stream of
/// conditions that fails at the first `false`.
pub type FailIfFalse<S> = Check<S, fn(&bool) -> bool>;

impl<S, P> Check<S, P> {
    pub(crate) fn new(stream: S, fails: P, message: String, must_see_items: bool) -> Self {
        Self {
            stream,
            fails,
            message,
            must_see_items,
            seen: false,
            done: false,
        }
    }
}

impl<S, P> Future for Check<S, P>
where
    S: Stream,
    S::Item: fmt::Debug,
    P: FnMut(&S::Item) -> bool,
{
    type Output = Result<(), CheckFailed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if *this.done {
            return Poll::Ready(Ok(()));
        }
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                *this.done = true;
                if *this.must_see_items && !*this.seen {
                    return Poll::Ready(Err(CheckFailed {
                        message: this.message.clone(),
                        item: None,
                    }));
                }
                return Poll::Ready(Ok(()));
            };
            *this.seen = true;
            if (this.fails)(&item) {
                *this.done = true;
                return Poll::Ready(Err(CheckFailed {
                    message: this.message.clone(),
                    item: Some(format!("{item:?}")),
                }));
            }
        }
    }
}

impl<S, P> FusedFuture for Check<S, P>
where
    S: Stream,
    S::Item: fmt::Debug,
    P: FnMut(&S::Item) -> bool,
{
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<S: fmt::Debug, P> fmt::Debug for Check<S, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Check")
            .field("stream", &self.stream)
            .field("message", &self.message)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
