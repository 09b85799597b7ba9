use futures::stream;
use giving_operators::{ReduceOps, StreamOps};

use super::{at, block_on, collect, stamped, timed};

#[test]
fn merge_interleaves_and_completes_when_both_do() {
    let mut v = collect(stream::iter([1, 2, 3]).merge(stream::iter([10, 20])));
    v.sort();
    assert_eq!(v, vec![1, 2, 3, 10, 20]);
    assert_eq!(
        collect(stream::iter(Vec::<i32>::new()).merge(stream::iter([1]))),
        vec![1]
    );
}

#[tokio::test(start_paused = true)]
async fn merge_orders_by_arrival() {
    let v = stamped(at(&[0, 30]).merge(at(&[10, 20, 40]))).await;
    assert_eq!(v, vec![(0, 0), (10, 10), (20, 20), (30, 30), (40, 40)]);
}

#[test]
fn zip_stops_with_the_shorter() {
    assert_eq!(
        collect(stream::iter([1, 2, 3]).zip(stream::iter(['a', 'b']))),
        vec![(1, 'a'), (2, 'b')]
    );
}

#[tokio::test(start_paused = true)]
async fn combine_latest_emits_on_either_side_once_both_have() {
    let a = timed(vec![(0, 'a'), (20, 'b'), (25, 'c')], None);
    let b = at(&[10, 30]);
    let v = stamped(a.combine_latest(b)).await;
    assert_eq!(
        v,
        vec![
            (10, ('a', 10)),
            (20, ('b', 10)),
            (25, ('c', 10)),
            (30, ('c', 30))
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn combine_latest_completion() {
    // One side never emits: completes as soon as it completes, with nothing.
    let empty = timed(Vec::<(u64, u64)>::new(), Some(5));
    let v = stamped(at(&[10, 20]).combine_latest(empty)).await;
    assert!(v.is_empty());
    // Otherwise it goes on until both have completed.
    let v: Vec<(u64, u64)> = at(&[0]).combine_latest(at(&[10, 20])).collect().await;
    assert_eq!(v, vec![(0, 10), (0, 20)]);
}

#[test]
fn combine_latest_with_ready_streams() {
    let v = collect(stream::iter([1, 2]).combine_latest(stream::iter(['x'])));
    assert!(!v.is_empty());
    assert_eq!(*v.last().unwrap(), (2, 'x'));
}

#[tokio::test(start_paused = true)]
async fn with_latest_from_pairs_with_the_latest_and_drops_early_items() {
    let steps = at(&[0, 20, 40, 60, 80]);
    let lr = timed(vec![(10, 0.1), (50, 0.01)], None); // completes at 50: keeps its last value
    let v = stamped(steps.with_latest_from(lr)).await;
    assert_eq!(
        v,
        vec![
            (20, (20, 0.1)),
            (40, (40, 0.1)),
            (60, (60, 0.01)),
            (80, (80, 0.01))
        ]
    );
}

#[test]
fn with_latest_from_an_empty_other_emits_nothing() {
    let v = collect(stream::iter([1, 2]).with_latest_from(stream::iter(Vec::<u8>::new())));
    assert!(v.is_empty());
}

#[test]
fn start_with_concat_chain() {
    assert_eq!(collect(stream::iter([3]).start_with([1, 2])), vec![1, 2, 3]);
    assert_eq!(
        collect(stream::iter(Vec::<i32>::new()).start_with([1])),
        vec![1]
    );
    assert_eq!(
        collect(stream::iter([1]).concat(stream::iter([2, 3]))),
        vec![1, 2, 3]
    );
    assert_eq!(
        collect(stream::iter([1]).chain(stream::iter([2]))),
        vec![1, 2]
    );
}

// ---- share ----------------------------------------------------------------------------------

#[test]
fn share_gives_every_item_to_every_handle() {
    let a = stream::iter(1..=5).share();
    let b = a.clone();
    let (va, vb): (Vec<i32>, Vec<i32>) = block_on(futures::future::join(a.collect(), b.collect()));
    assert_eq!(va, vec![1, 2, 3, 4, 5]);
    assert_eq!(vb, va);
}

#[test]
fn share_a_late_clone_sees_only_later_items() {
    let mut a = stream::iter(1..=4).share();
    assert_eq!(block_on(a.next()), Some(1));
    let b = a.clone();
    assert_eq!(a.handles(), 2);
    assert_eq!(collect(a), vec![2, 3, 4]);
    // `b` was queued the items `a` pulled after `b` existed; the upstream is done.
    assert_eq!(collect(b), vec![2, 3, 4]);
}

#[test]
fn share_a_dropped_handle_does_not_block_the_others() {
    let a = stream::iter(1..=3).share();
    let b = a.clone();
    drop(b);
    assert_eq!(a.handles(), 1);
    assert_eq!(collect(a), vec![1, 2, 3]);
}

#[test]
fn share_clone_after_completion_is_complete() {
    let a = stream::iter(1..=2).share();
    let b = a.clone();
    assert_eq!(collect(a), vec![1, 2]);
    let c = b.clone();
    assert!(collect(c).is_empty());
    assert_eq!(collect(b), vec![1, 2]);
}

#[tokio::test(start_paused = true)]
async fn share_across_tasks_with_a_live_upstream() {
    let a = at(&[10, 20, 30]).share();
    let b = a.clone();
    let c = a.clone();
    let ta = tokio::spawn(stamped(a));
    let tb = tokio::spawn(stamped(b.map(|x| x * 2)));
    let tc = tokio::spawn(async move { c.sum().await });
    let want = vec![(10, 10), (20, 20), (30, 30)];
    assert_eq!(ta.await.unwrap(), want);
    assert_eq!(tb.await.unwrap(), vec![(10, 20), (20, 40), (30, 60)]);
    assert_eq!(tc.await.unwrap(), Some(60));
}

#[tokio::test(start_paused = true)]
async fn share_a_waiting_handle_is_woken_by_another_handles_pull() {
    // `b` waits on the upstream; `a` then pulls the item: `b` must still get it.
    let a = at(&[10, 20]).share();
    let b = a.clone();
    let tb = tokio::spawn(stamped(b));
    tokio::task::yield_now().await;
    let va = stamped(a).await;
    assert_eq!(va, vec![(10, 10), (20, 20)]);
    assert_eq!(tb.await.unwrap(), vec![(10, 10), (20, 20)]);
}
