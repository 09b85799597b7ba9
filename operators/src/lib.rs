//! # giving-operators
//!
//! ReactiveX and Python-`giving` operators on any [`futures::Stream`]: the generic layer of
//! [`giving`](https://docs.rs/giving). Every operator is a method of [`StreamOps`], implemented
//! for every `Stream`, so `use giving_operators::StreamOps;` (or `use giving::prelude::*;`)
//! is all a pipeline needs.
//!
//! Operators take plain (synchronous) closures, as Python `giving` and ReactiveX do; where a
//! name also exists in `futures::StreamExt` with the same meaning, [`StreamOps`] delegates to
//! the futures-util implementation. Because the two traits share method names, import one of
//! them, not both: `StreamOps` is the one the `giving` prelude exports.
//!
//! ```
//! use giving_operators::StreamOps;
//!
//! # tokio_test_block_on(async {
//! let evens: Vec<i32> = futures::stream::iter(1..=6).filter(|x| x % 2 == 0).collect().await;
//! assert_eq!(evens, vec![2, 4, 6]);
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output { futures::executor::block_on(f) }
//! ```

mod ext;
mod filter;
mod print;

pub use ext::StreamOps;
pub use filter::Filter;
pub use print::Print;
