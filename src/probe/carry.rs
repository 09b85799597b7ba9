//! [`carry`]: a future that keeps the probed calls enclosing its creation, for a task spawned
//! inside a probed function (`outer > inner > x` where `inner` runs in a `tokio::spawn`ed task
//! of `outer`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::active_frame::{ActiveFrame, current_stack, pop_frame, push_frame};

/// Wraps `future` so that each of its polls runs inside the probed calls that enclose this
/// call: a task spawned by an instrumented function then matches selectors that name that
/// function (`outer > inner > x`), as its own calls do. ptera gets this from Python's context
/// variables, which a new asyncio task copies; a tokio task starts with an empty stack, so
/// without `carry` its calls match only selectors that start inside the task.
///
/// The enclosing calls' captured values are those last set, even once those calls returned.
///
/// ```
/// use giving::prelude::*;
///
/// #[giving::probe]
/// async fn inner(x: u32) -> u32 {
///     let y = x + 1;
///     y
/// }
///
/// #[giving::probe]
/// async fn outer(tag: u32) -> u32 {
///     tokio::spawn(giving::probe::carry(inner(tag))).await.unwrap()
/// }
///
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() {
/// let gv = giving::Given::global();
/// let probe = gv.probe("outer(tag) > inner > y").unwrap();
/// outer(7).await;
/// gv.finish_async().await.unwrap();
/// let events: Vec<String> = probe.map(|e| e.to_string()).collect().await;
/// assert_eq!(events, ["tag=7 y=8"]);
/// # }
/// ```
pub fn carry<F: Future>(future: F) -> Carried<F> {
    Carried {
        future,
        frames: current_stack(),
    }
}

pin_project_lite::pin_project! {
    /// Future of [`carry`].
    pub struct Carried<F> {
        #[pin]
        future: F,
        frames: Vec<Arc<ActiveFrame>>,
    }
}

impl<F: Future> Future for Carried<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        /// Pops what it pushed, however the poll ends.
        struct Pushed<'a>(&'a [Arc<ActiveFrame>], Vec<bool>);
        impl Drop for Pushed<'_> {
            fn drop(&mut self) {
                for (frame, pushed) in self.0.iter().zip(&self.1).rev() {
                    if *pushed {
                        pop_frame(frame);
                    }
                }
            }
        }
        let pushed = Pushed(this.frames, this.frames.iter().map(push_frame).collect());
        let poll = this.future.poll(cx);
        drop(pushed);
        poll
    }
}

impl<F> std::fmt::Debug for Carried<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Carried")
            .field("frames", &self.frames.len())
            .finish_non_exhaustive()
    }
}
