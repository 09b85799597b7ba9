//! [`given()`] scopes: what receives the events given by a loop, and for how long.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::pipeline::{Completion, FinishError, Pipeline, PipelineSet};
use crate::probe::{Probe, ProbeError, ProbeSet};
use crate::queue::Delivery;
use crate::routing;
use crate::scope::{Derivation, Scope, Subscription};
use crate::stream::EventStream;
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
    Given::new(routing::open(false))
}

/// An open scope; see [`given()`]. Ends when finished or dropped.
pub struct Given {
    scope: Arc<Scope>,
    pipelines: Arc<PipelineSet>,
    /// The probes opened from this scope, ended with it.
    probes: ProbeSet,
}

impl Given {
    fn new(scope: Arc<Scope>) -> Self {
        Self {
            scope,
            pipelines: Arc::default(),
            probes: ProbeSet::default(),
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
        Given::new(routing::open(true))
    }

    /// Subscribes, losslessly, to the events given from now on.
    pub fn stream(&self) -> EventStream {
        self.stream_with(Delivery::Lossless)
    }

    /// Subscribes with a chosen [`Delivery`] policy (bounded with drop-oldest, latest-only).
    pub fn stream_with(&self, delivery: Delivery) -> EventStream {
        EventStream::new(
            routing::subscribe(&self.scope, delivery),
            self.scope.clone(),
        )
    }

    /// A handle that carries this scope into another thread or task; see [`GivenHandle`].
    pub fn handle(&self) -> GivenHandle {
        GivenHandle {
            scope: self.scope.clone(),
        }
    }

    /// Opens a probe: the events of the variables `selector` names in functions instrumented
    /// with [`#[probe]`](macro@crate::probe), as a stream (see [`mod@crate::probe`]). The probe
    /// observes the calls made where this scope receives `give!` events (this thread and the
    /// threads it is carried to; every thread for a [global](Given::global) scope), is active
    /// while the stream lives, and ends with the scope. A malformed selector, or one that
    /// names no instrumented function or variable, is an error that says which and where.
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::given;
    ///
    /// #[giving::probe]
    /// fn double(x: i64) -> i64 {
    ///     x * 2
    /// }
    ///
    /// let gv = given();
    /// let calls = gv.probe("double(x, !#value as y)").unwrap();
    /// double(21);
    /// gv.finish().unwrap();
    /// let calls: Vec<_> = futures::executor::block_on(calls.collect());
    /// assert_eq!(calls[0].to_string(), "x=21 y=42");
    ///
    /// let error = given().probe("dobule > x").unwrap_err();
    /// assert!(error.to_string().contains("closest: double"));
    /// ```
    pub fn probe(&self, selector: &str) -> Result<Probe, ProbeError> {
        let scope = self.scope.clone();
        let receives = move || scope.is_global() || routing::thread_is_in(&scope);
        Probe::open(selector, Box::new(receives), &self.probes)
    }

    /// A [`Giver`] that gives into this scope from any thread.
    pub fn giver(&self) -> Giver {
        Giver::new(vec![self.scope.clone()])
    }

    /// This scope's stop token: stopping it ends every [`iterate`](fn@crate::iterate) loop
    /// running in the scope at its next step.
    pub fn stop_token(&self) -> StopToken {
        self.scope.stop_token().clone()
    }

    /// Whether the scope has ended.
    pub fn is_finished(&self) -> bool {
        self.scope.is_finished()
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

    /// Runs a *check*: a pipeline whose output says whether what it watched was right
    /// (`Err` if not), such as the `fail*` sinks of
    /// [`StreamOps`](giving_operators::StreamOps). A failed check is reported by
    /// [`finish`](Given::finish) as [`PipelineError::CheckFailed`](crate::PipelineError), with
    /// its message naming the item that failed it, as milabench's health checks report a bad
    /// run; training is not interrupted.
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::{FinishError, PipelineError, give, given};
    ///
    /// let gv = given();
    /// gv.check(gv.stream().key::<f64>("loss").fail_if(|l| l.is_nan(), "the loss diverged"));
    /// for loss in [0.5, f64::NAN, 0.4] {
    ///     give!(loss);
    /// }
    /// let Err(FinishError::Failed(failures)) = gv.finish() else { panic!("not reported") };
    /// assert_eq!(failures[0].to_string(), "check #0 failed: the loss diverged: NaN");
    /// ```
    pub fn check<F, T, E>(&self, check: F) -> Pipeline<F::Output>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        self.pipelines.spawn_checked(check)
    }

    /// Runs a pipeline that *derives* events: it reads this scope's events from `events` and
    /// gives new ones back into the scope through `giver` (a rate from step events, a stop
    /// request's progress, a smoothed loss). What it gives reaches every subscriber of the
    /// scope, including its last outputs: [`finish`](Given::finish) first completes the
    /// derivations' inputs, one at a time in the order they were made, and waits for each
    /// pipeline to end before it ends the scope for everyone else.
    ///
    /// So a derivation sees the final outputs of the derivations made before it (derive a
    /// rate, then an early stop that counts rates), and its own outputs never come back to
    /// its input (no feedback loop). Derived pipelines are waited for by `finish` like
    /// [`spawn`](Given::spawn)ed ones, and their panics are reported the same way. A scope
    /// that is dropped without `finish` ends at once, derivations included.
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::{Event, give, given};
    ///
    /// let gv = given();
    /// let sink = gv.spawn(gv.stream().key::<f64>("best").collect::<Vec<_>>());
    /// let _best = gv.derive(|events, giver| async move {
    ///     // The minimum is known when the loop's events end; it still reaches the sink.
    ///     if let Some(best) = events.key::<f64>("loss").min().await {
    ///         giver.give(Event::builder().field("best", best).build());
    ///     }
    /// });
    /// for loss in [0.9, 0.3, 0.5] {
    ///     give!(loss);
    /// }
    /// gv.finish().unwrap();
    /// assert_eq!(sink.join().unwrap(), vec![0.3]);
    /// ```
    pub fn derive<F, Fut>(&self, derive: F) -> Pipeline<Fut::Output>
    where
        F: FnOnce(EventStream, Giver) -> Fut,
        Fut: Future + Send + 'static,
        Fut::Output: Send + 'static,
    {
        let reader = self.scope.feed_reader();
        let (id, input) = (reader.id(), reader.state().clone());
        let events = EventStream::new(Subscription::Feed(reader), self.scope.clone());
        let giver = self.giver().skipping(id);
        let done = Arc::new(Completion::default());
        let pipeline = self
            .pipelines
            .spawn_with(derive(events, giver), Some(done.clone()));
        self.scope.add_derivation(Derivation { input, done });
        pipeline
    }

    /// Ends the scope, then blocks until every pipeline spawned on it has finished (their
    /// streams complete once drained, so logs get flushed). [Derivations](Given::derive) are
    /// drained first, so their last outputs reach every sink. Errors list the pipelines that
    /// panicked. Inside async code, use [`finish_async`](Given::finish_async).
    pub fn finish(self) -> Result<(), FinishError> {
        // Probes end first: a derivation that forwards probe events can then finish too.
        self.probes.close();
        while let Some(derivation) = self.scope.take_derivation() {
            self.scope.close_input(&derivation.input);
            if let Err(error) = derivation.done.wait() {
                routing::finish(&self.scope);
                return Err(error);
            }
        }
        routing::finish(&self.scope);
        self.pipelines.wait()
    }

    /// [`finish`](Given::finish) for async code: drains the derivations, ends the scope and
    /// awaits the pipelines.
    pub async fn finish_async(self) -> Result<(), FinishError> {
        self.probes.close();
        while let Some(derivation) = self.scope.take_derivation() {
            self.scope.close_input(&derivation.input);
            derivation.done.wait_async().await;
        }
        routing::finish(&self.scope);
        self.pipelines.wait_async().await
    }
}

impl Drop for Given {
    fn drop(&mut self) {
        routing::finish(&self.scope);
        self.probes.close();
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
pub struct GivenHandle {
    scope: Arc<Scope>,
}

impl GivenHandle {
    /// Makes the calling thread part of the scope until the guard drops.
    pub fn enter(&self) -> Entered {
        let entered = routing::enter_thread_scope(&self.scope);
        Entered {
            scope: entered.then(|| self.scope.clone()),
            _not_send: std::marker::PhantomData,
        }
    }

    /// Whether the scope has ended.
    pub fn is_finished(&self) -> bool {
        self.scope.is_finished()
    }

    /// Wraps a future so that every poll of it runs inside the scope (for tokio tasks, which
    /// may move between threads).
    pub fn wrap<F: Future>(&self, future: F) -> InGiven<F> {
        InGiven {
            future,
            handle: self.clone(),
        }
    }
}

impl std::fmt::Debug for GivenHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GivenHandle").finish_non_exhaustive()
    }
}

/// Guard of [`GivenHandle::enter`]; leaving the scope when dropped. Stays on its thread.
pub struct Entered {
    scope: Option<Arc<Scope>>,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some(scope) = &self.scope {
            routing::exit_thread_scope(scope);
        }
    }
}

impl std::fmt::Debug for Entered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entered").finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// Future of [`GivenHandle::wrap`].
    #[must_use = "futures do nothing unless polled"]
    pub struct InGiven<F> {
        #[pin]
        future: F,
        handle: GivenHandle,
    }
}

impl<F: Future> Future for InGiven<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _inside = this.handle.enter();
        this.future.poll(cx)
    }
}
