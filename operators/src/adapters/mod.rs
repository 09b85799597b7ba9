//! The types the [`StreamOps`](crate::StreamOps) methods return, as tokio-stream's
//! `adapters`: a pipeline rarely names them (`impl Stream` is the usual spelling), but they
//! are here for signatures that must. Each implements `Debug` when its upstream does (closures
//! are not shown), and `FusedStream` (or `FusedFuture`) where it can tell that it has ended.
//!
//! One file per adapter, re-exported beside its `mod` line: a new operator is one file and one
//! pair here (see "Adding an operator" in `docs/operators.md`). The reductions' adapters live
//! with the reducers, in [`reduce`](crate::reduce).

mod at_end;
pub use at_end::{AtEnd, Sort, SortByKey};
mod buffer;
pub use buffer::Buffer;
mod buffer_skip;
pub use buffer_skip::BufferSkip;
mod buffer_time;
pub use buffer_time::BufferTime;
mod combine_latest;
pub use combine_latest::CombineLatest;
mod debounce;
pub use debounce::Debounce;
mod distinct;
pub use distinct::{Distinct, DistinctItems};
mod distinct_until_changed;
pub use distinct_until_changed::DistinctUntilChanged;
mod distinct_until_changed_by;
pub use distinct_until_changed_by::DistinctUntilChangedBy;
mod fail;
pub use fail::{Check, CheckFailed, Fail, FailIfFalse};
mod filter;
pub use filter::Filter;
mod filter_map;
pub use filter_map::FilterMap;
mod for_each;
pub use for_each::ForEach;
mod group_by;
pub use group_by::{Group, GroupBy};
mod pairwise;
pub use pairwise::Pairwise;
mod print;
pub use print::Print;
mod roll;
pub use roll::Roll;
mod sample;
pub use sample::Sample;
mod share;
pub use share::Shared;
mod skip_while;
pub use skip_while::SkipWhile;
mod slice;
pub use slice::Slice;
mod slice_by;
pub use slice_by::SliceBy;
mod take_last;
pub use take_last::HoldLast;
mod take_while;
pub use take_while::TakeWhile;
mod throttle;
pub use throttle::Throttle;
mod throttle_latest;
pub use throttle_latest::ThrottleLatest;
mod timeout;
pub use timeout::{Elapsed, Timeout};
// The sleep `debounce` and `throttle_latest` re-arm (crate-private).
mod timer;
mod with_latest_from;
pub use with_latest_from::WithLatestFrom;

// The reductions' two adapters, named here too so that every type a method returns is found
// in one module.
pub use crate::reduce::{Reduce, Running};
