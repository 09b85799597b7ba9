//! [`given()`] scopes: what receives the events given by a loop, and for how long.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::pipeline::{FinishError, Pipeline, PipelineSet};
use crate::scope::{self, Scope};
use crate::subscriber::{Delivery, EventStream};
use crate::{Giver, StopToken};

/// Opens a scope that receives every event given on this thread, until it ends.
///
/// Subscribe with [`Given::stream`], run pipelines with [`Given::spawn`], then end the scope
/// with [`Given::finish`] (or by dropping it): every stream derived from it completes, so
/// reductions such as `min` or `count` emit their result. Scopes nest: an outer and an inner
/// scope both receive. Other threads and tasks are reached by carrying the scope there
/// ([`Given::handle`]) or with a [`Given::global`] scope.
///
/// ```
/// use giving::prelude::*;
/// use giving::{give, given};
///
/// let gv = given();
/// let losses = gv.spawn(gv.stream().key::<f64>("loss").collect::<Vec<_>>());
/// for loss in [0.9, 0.4, 0.6] {
///     give!(loss);
/// }
/// gv.finish().unwrap();
/// assert_eq!(losses.join().unwrap(), vec![0.9, 0.4, 0.6]);
/// ```
pub fn given() -> Given {
    let scope = Scope::open(false);
    scope::enter_thread_scope(&scope);
    Given::new(scope)
}

/// An open scope; see [`given()`]. Ends when finished or dropped.
pub struct Given {
    scope: Arc<Scope>,
    pipelines: Arc<PipelineSet>,
}

impl Given {
    fn new(scope: Arc<Scope>) -> Self {
        Self {
            scope,
            pipelines: Arc::default(),
        }
    }

    /// Opens a scope that receives the events given on every thread of the process.
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::{give, Given};
    ///
    /// let gv = Given::global();
    /// let events = gv.stream();
    /// std::thread::spawn(|| give!(worker = 7)).join().unwrap();
    /// gv.finish().unwrap();
    /// let seen: Vec<i64> = futures::executor::block_on(events.key::<i64>("worker").collect());
    /// assert_eq!(seen, vec![7]);
    /// ```
    pub fn global() -> Given {
        Given::new(Scope::open(true))
    }

    /// Subscribes, losslessly, to the events given from now on.
    pub fn stream(&self) -> EventStream {
        self.scope.subscribe(Delivery::Lossless)
    }

    /// Subscribes with a chosen [`Delivery`] policy (bounded with drop-oldest, latest-only).
    pub fn stream_with(&self, delivery: Delivery) -> EventStream {
        self.scope.subscribe(delivery)
    }

    /// A handle that carries this scope into another thread or task; see [`ScopeHandle`].
    pub fn handle(&self) -> ScopeHandle {
        ScopeHandle {
            scope: self.scope.clone(),
        }
    }

    /// A [`Giver`] that gives into this scope from any thread.
    pub fn giver(&self) -> Giver {
        Giver::new(vec![self.scope.clone()])
    }

    /// This scope's stop token: stopping it ends every [`iterate`](crate::iterate) loop
    /// running in the scope at its next step.
    pub fn stop_token(&self) -> StopToken {
        self.scope.stop_token().clone()
    }

    /// Whether the scope has ended.
    pub fn is_finished(&self) -> bool {
        self.scope.is_closed()
    }

    /// Runs a pipeline future: on the current tokio runtime if called from one, otherwise on a
    /// background runtime started on demand. [`finish`](Given::finish) waits for it. A panic in
    /// the pipeline is caught and reported by `finish` and by the returned handle.
    pub fn spawn<F>(&self, pipeline: F) -> Pipeline<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.pipelines.spawn(pipeline)
    }

    /// Ends the scope, then blocks until every pipeline spawned on it has finished (their
    /// streams complete once drained, so logs get flushed). Errors list the pipelines that
    /// panicked. Inside async code, use [`finish_async`](Given::finish_async).
    pub fn finish(self) -> Result<(), FinishError> {
        self.scope.close();
        self.pipelines.wait()
    }

    /// [`finish`](Given::finish) for async code: ends the scope and awaits the pipelines.
    pub async fn finish_async(self) -> Result<(), FinishError> {
        self.scope.close();
        self.pipelines.wait_async().await
    }
}

impl Drop for Given {
    fn drop(&mut self) {
        self.scope.close();
    }
}

impl std::fmt::Debug for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Given")
            .field("global", &self.scope.is_global())
            .field("finished", &self.is_finished())
            .finish()
    }
}

/// Carries a thread scope into another thread or task, so that `give!` there reaches it.
///
/// ```
/// use giving::prelude::*;
/// use giving::{give, given};
///
/// let gv = given();
/// let events = gv.stream();
/// let handle = gv.handle();
/// std::thread::spawn(move || {
///     let _inside = handle.enter();
///     give!(x = 1);
/// })
/// .join()
/// .unwrap();
/// std::thread::spawn(|| give!(x = 2)).join().unwrap(); // not carried: not received
/// gv.finish().unwrap();
/// let xs: Vec<i64> = futures::executor::block_on(events.key::<i64>("x").collect());
/// assert_eq!(xs, vec![1]);
/// ```
#[derive(Clone)]
pub struct ScopeHandle {
    scope: Arc<Scope>,
}

impl ScopeHandle {
    /// Makes the calling thread part of the scope until the guard drops.
    pub fn enter(&self) -> Entered {
        let entered = scope::enter_thread_scope(&self.scope);
        Entered {
            scope: entered.then(|| self.scope.clone()),
            _not_send: std::marker::PhantomData,
        }
    }

    /// Whether the scope has ended.
    pub fn is_finished(&self) -> bool {
        self.scope.is_closed()
    }

    /// Wraps a future so that every poll of it runs inside the scope (for tokio tasks, which
    /// may move between threads).
    pub fn wrap<F: Future>(&self, future: F) -> InScope<F> {
        InScope {
            future,
            handle: self.clone(),
        }
    }
}

impl std::fmt::Debug for ScopeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeHandle").finish_non_exhaustive()
    }
}

/// Guard of [`ScopeHandle::enter`]; leaving the scope when dropped. Stays on its thread.
pub struct Entered {
    scope: Option<Arc<Scope>>,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some(scope) = &self.scope {
            scope::exit_thread_scope(scope);
        }
    }
}

impl std::fmt::Debug for Entered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entered").finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// Future of [`ScopeHandle::wrap`].
    #[must_use = "futures do nothing unless polled"]
    pub struct InScope<F> {
        #[pin]
        future: F,
        handle: ScopeHandle,
    }
}

impl<F: Future> Future for InScope<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _inside = this.handle.enter();
        this.future.poll(cx)
    }
}
