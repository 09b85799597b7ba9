//! Which adapters cross threads (Send), can be shared (Sync) and move after pinning (Unpin),
//! given upstreams and closures that do: a change that loses one fails here first.

use std::time::Duration;

use giving_operators::adapters::*;
use giving_operators::{ReduceOps, StreamOps};

fn all<T: Send + Sync + Unpin>(_: &T) {}
fn send_unpin<T: Send + Unpin>(_: &T) {}
fn send<T: Send>(_: &T) {}

fn up() -> futures::stream::Iter<std::vec::IntoIter<u32>> {
    futures::stream::iter(vec![1, 2, 3])
}

#[test]
fn adapters_keep_send_sync_and_unpin() {
    all::<Buffer<_>>(&up().buffer(2));
    all::<BufferSkip<_>>(&up().buffer_skip(2, 1));
    all::<Filter<_, _>>(&up().filter(|x| *x > 1));
    all::<FilterMap<_, _>>(&up().filter_map(|x| Some(x + 1)));
    all::<Distinct<_, _, _>>(&up().distinct());
    all::<DistinctUntilChanged<_>>(&up().distinct_until_changed());
    all::<Pairwise<_>>(&up().pairwise());
    all::<Roll<_>>(&up().roll(2));
    all::<Slice<_>>(&up().slice(0..2));
    all::<TakeWhile<_, _>>(&up().take_while(|x| *x < 2));
    all::<SkipWhile<_, _>>(&up().skip_while(|x| *x < 2));
    all::<Throttle<_>>(&up().throttle(Duration::from_secs(1)));
    all::<CombineLatest<_, _>>(&up().combine_latest(up()));
    all::<WithLatestFrom<_, _>>(&up().with_latest_from(up()));
    all::<Running<_, _>>(&up().min_scan());
    all::<Reduce<_, _>>(&up().min());
    all::<ForEach<_, _>>(&up().for_each(|_| {}));
    // The aliases name what their methods return.
    all::<DistinctItems<_>>(&up().distinct());
    all::<Sort<_>>(&up().sort());
    all::<Fail<_>>(&up().fail("any item"));
    all::<Fail<_>>(&up().fail_if_empty("no item"));
    all::<FailIfFalse<_>>(&futures::stream::iter(vec![true]).fail_if_false("false"));
    // The boxed sorting closure is `Send` but not `Sync`.
    send_unpin::<SortByKey<_>>(&up().sort_by_key(|x| *x));
    // Timers hold tokio's `Sleep`, which is `!Unpin`; they are boxed inside, so the adapters
    // stay Unpin.
    send_unpin::<Debounce<_>>(&up().debounce(Duration::from_secs(1)));
    send_unpin::<Sample<_>>(&up().sample(Duration::from_secs(1)));
    send_unpin::<BufferTime<_>>(&up().buffer_time(Duration::from_secs(1)));
    send_unpin::<Timeout<_>>(&up().timeout(Duration::from_secs(1)));
    send::<Shared<_>>(&up().share());
    send::<GroupBy<_, _, _>>(&up().group_by(|x| x % 2));
    send::<Print<_>>(&up().print());
}
