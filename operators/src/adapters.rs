//! The types the [`StreamOps`](crate::StreamOps) methods return, as tokio-stream's
//! `adapters`: a pipeline rarely names them (`impl Stream` is the usual spelling), but they
//! are here for signatures that must. Each implements `Debug` when its upstream does (closures
//! are not shown), and `FusedStream` (or `FusedFuture`) where it can tell that it has ended.

pub use crate::at_end::AtEnd;
pub use crate::buffer::Buffer;
pub use crate::buffer_skip::BufferSkip;
pub use crate::buffer_time::BufferTime;
pub use crate::combine_latest::CombineLatest;
pub use crate::debounce::Debounce;
pub use crate::distinct::Distinct;
pub use crate::distinct_until_changed::DistinctUntilChanged;
pub use crate::distinct_until_changed_by::DistinctUntilChangedBy;
pub use crate::fail::Check;
pub use crate::filter::Filter;
pub use crate::filter_map::FilterMap;
pub use crate::for_each::ForEach;
pub use crate::group_by::{Group, GroupBy};
pub use crate::pairwise::Pairwise;
pub use crate::print::Print;
pub use crate::reduce::{Reduce, Running};
pub use crate::roll::Roll;
pub use crate::sample::Sample;
pub use crate::share::Shared;
pub use crate::skip_while::SkipWhile;
pub use crate::slice::Slice;
pub use crate::slice_by::SliceBy;
pub use crate::take_last::HoldLast;
pub use crate::take_while::TakeWhile;
pub use crate::throttle::Throttle;
pub use crate::timeout::Timeout;
pub use crate::with_latest_from::WithLatestFrom;
