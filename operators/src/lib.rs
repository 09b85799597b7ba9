//! # giving-operators
//!
//! ReactiveX and Python-`giving` operators on any [`futures::Stream`]: the generic layer of
//! [`giving`](https://docs.rs/giving). Every operator is a method of one of two extension traits,
//! both implemented for every `Stream`: [`ReduceOps`] for the reductions (min, sum, average,
//! …), [`StreamOps`] for all the others. `use giving_operators::{ReduceOps, StreamOps};` (or
//! `use giving::prelude::*;`) is all a pipeline needs.
//!
//! Operators take plain (synchronous) closures, as Python `giving` and ReactiveX do; where a
//! name also exists in `futures::StreamExt` with the same meaning, [`StreamOps`] delegates to
//! the futures-util implementation. Because these traits and `StreamExt` share method names
//! (`map`, `count`, …), import ours or `StreamExt`, not both: the `giving` prelude exports ours.
//!
//! - time (tokio clock): [`throttle`](StreamOps::throttle),
//!   [`throttle_latest`](StreamOps::throttle_latest), [`debounce`](StreamOps::debounce),
//!   [`sample`](StreamOps::sample), [`buffer_time`](StreamOps::buffer_time),
//!   [`timeout`](StreamOps::timeout);
//! - windows: [`buffer`](StreamOps::buffer), [`buffer_skip`](StreamOps::buffer_skip),
//!   [`pairwise`](StreamOps::pairwise), [`roll`](StreamOps::roll),
//!   [`group_by`](StreamOps::group_by);
//! - reductions, each final (`min`), running (`min_scan`) and rolling (`min_rolling(n)`):
//!   min, max, sum, count, average, variance, average_and_variance, reduce, top, bottom; and
//!   fold/scan, first, last, element_at (the methods of [`ReduceOps`]; see [`reduce`]);
//! - filtering: distinct, distinct_until_changed, take, skip, take_while, skip_while,
//!   take_until, slice;
//! - combining: merge, zip, combine_latest, with_latest_from, start_with, concat, and
//!   [`share`](StreamOps::share) for several consumers of one stream.
//!
//! `docs/operators.md` has the full table with the Python giving / ReactiveX names.
//!
//! ```
//! use giving_operators::{ReduceOps, StreamOps};
//!
//! # futures::executor::block_on(async {
//! let evens: Vec<i32> = futures::stream::iter(1..=6).filter(|x| x % 2 == 0).collect().await;
//! assert_eq!(evens, vec![2, 4, 6]);
//! let best = futures::stream::iter([0.9, 0.4, 0.7]).min().await;
//! assert_eq!(best, Some(0.4));
//! # });
//! ```

pub mod adapters;
pub mod reduce;
mod stream_ops;

pub use adapters::{CheckFailed, Elapsed};
pub use reduce::{Numeric, ReduceOps, Reducer};
pub use stream_ops::StreamOps;
