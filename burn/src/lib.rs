//! # giving-burn
//!
//! What a user needs to instrument *their own* [burn](https://burn.dev) training loop with
//! [`giving`]: give a tensor without reading it. A [`LazyTensor`] is given as a
//! [`Value::Lazy`](giving::Value::Lazy); the consumer that reads it (a log, a chart) resolves
//! it on its own thread, so giving a loss never forces a device sync on the training thread.
//!
//! ```
//! use burn::backend::Flex;
//! use burn::tensor::Tensor;
//! use giving::prelude::*;
//! use giving::{give, given};
//! use giving_burn::LazyTensor;
//!
//! let gv = given();
//! let losses = gv.spawn(gv.stream().key::<f64>("loss").collect::<Vec<_>>());
//! let device = Default::default();
//! for step in 0..3 {
//!     let loss_tensor = Tensor::<Flex, 1>::from_floats([1.0 / 2f32.powi(step)], &device);
//!     let loss = LazyTensor::new(loss_tensor); // a handle clone: no copy, no sync
//!     give!(loss);
//! }
//! gv.finish().unwrap();
//! assert_eq!(losses.join().unwrap(), vec![1.0, 0.5, 0.25]); // exact in f32
//! ```
//!
//! In a burn loop, sync the device once per window with
//! [`iterate`](giving::iterate)'s `sync` hook (`B::sync(&device)`), never per step: that is how
//! the rate instrument measures throughput without slowing the loop (milabench's method).
//! `docs/burn.md` walks through a whole loop.

mod activations;
pub mod denormals;
pub mod heap;
mod lazy;
mod probe;
mod watch;
mod watching;

pub use lazy::{LazyTensor, data_to_value, resolution_count};
pub use probe::{probe_autodiff_tensors, probe_tensors};
pub use watch::{DEFAULT_BINS, ModelWatch, StatsOn};
pub use watching::Watching;

// Documented by its own module doc (one doc per module: rustdoc would read an outer doc's
// links and the module's own in one scope).
#[cfg(feature = "train")]
pub mod train;
