//! burn-train's `Learner` observed by giving (feature `train`): a [`GivingLogger`] (burn-train's
//! `MetricLogger`) gives every metric update as an event.
//!
//! burn-train calls the logger on a thread of its own, not on the thread that
//! calls `launch`: it captures, when it is made, the scopes the making thread gives into
//! ([`Giver::current`](giving::Giver::current)), so make them inside the run's scope.

mod keys;
mod logger;

pub use keys::metric_key;
pub use logger::GivingLogger;
