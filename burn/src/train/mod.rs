//! burn-train's `Learner` observed by giving (feature `train`): a [`GivingLogger`] (burn-train's
//! `MetricLogger`) gives every metric update as an event, a [`GivingRenderer`] (its
//! `MetricsRenderer`) gives the Learner's progress, and a [`StopBridge`] stops the Learner
//! through its `Interrupter` when a giving stop token is stopped.
//!
//! burn-train calls the logger and the renderer on threads of its own, not on the thread that
//! calls `launch`: each captures, when it is made, the scopes the making thread gives into
//! ([`Giver::current`](giving::Giver::current)), so make them inside the run's scope.

mod keys;
mod logger;
mod renderer;
mod stop;

pub use keys::{metric_key, metric_value};
pub use logger::GivingLogger;
pub use renderer::GivingRenderer;
pub use stop::StopBridge;
