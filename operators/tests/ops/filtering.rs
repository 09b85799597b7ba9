use futures::stream;
use giving_operators::{ReduceOps, StreamOps};

use super::{at, block_on, collect, ms};

#[test]
fn filter_and_filter_map() {
    assert_eq!(
        collect(stream::iter(1..=6).filter(|x| x % 3 == 0)),
        vec![3, 6]
    );
    assert_eq!(
        collect(stream::iter(["1", "x", "3"]).filter_map(|s| s.parse::<i32>().ok())),
        vec![1, 3]
    );
}

#[test]
fn distinct_keeps_first_occurrences() {
    assert_eq!(
        collect(stream::iter([1, 2, 1, 3, 2, 3, 4]).distinct()),
        vec![1, 2, 3, 4]
    );
    assert_eq!(
        collect(stream::iter(["a", "bb", "c", "dd", "eee"]).distinct_by_key(|s| s.len())),
        vec!["a", "bb", "eee"]
    );
    assert!(collect(stream::iter(Vec::<u8>::new()).distinct()).is_empty());
}

#[test]
fn distinct_until_changed_drops_consecutive_repeats_only() {
    assert_eq!(
        collect(stream::iter([1, 1, 2, 2, 2, 1, 3, 3]).distinct_until_changed()),
        vec![1, 2, 1, 3]
    );
    // NaN is never equal to itself: every NaN passes.
    let v = collect(stream::iter([f64::NAN, f64::NAN]).distinct_until_changed());
    assert_eq!(v.len(), 2);
}

#[test]
fn take_and_skip() {
    assert_eq!(collect(stream::iter(1..).take(3)), vec![1, 2, 3]);
    assert_eq!(collect(stream::iter(1..=3).take(10)), vec![1, 2, 3]);
    assert_eq!(collect(stream::iter(1..=5).skip(3)), vec![4, 5]);
    assert!(collect(stream::iter(1..=2).skip(5)).is_empty());
}

#[test]
fn take_while_stops_at_the_first_failure_without_polling_further() {
    let mut polled = 0;
    let v = collect(
        stream::iter([1, 2, 5, 1, 1])
            .inspect(|_| polled += 1)
            .take_while(|x| *x < 3),
    );
    assert_eq!((v, polled), (vec![1, 2], 3));
    assert!(collect(stream::iter([5, 1]).take_while(|x| *x < 3)).is_empty());
}

#[test]
fn skip_while_then_passes_everything() {
    assert_eq!(
        collect(stream::iter([1, 2, 5, 1, 7]).skip_while(|x| *x < 3)),
        vec![5, 1, 7]
    );
    assert!(collect(stream::iter([1, 2]).skip_while(|x| *x < 3)).is_empty());
}

#[tokio::test(start_paused = true)]
async fn take_until_a_timer() {
    let v: Vec<u64> = at(&[10, 20, 150, 200])
        .take_until(tokio::time::sleep(ms(100)))
        .collect()
        .await;
    assert_eq!(v, vec![10, 20]);
}

#[test]
fn slice_ranges() {
    let s = || stream::iter(0..10);
    assert_eq!(collect(s().slice(2..5)), vec![2, 3, 4]);
    assert_eq!(collect(s().slice(7..)), vec![7, 8, 9]);
    assert_eq!(collect(s().slice(..=1)), vec![0, 1]);
    assert_eq!(collect(s().slice(..)), (0..10).collect::<Vec<_>>());
    assert_eq!(collect(s().slice(8..20)), vec![8, 9]);
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = 5..3;
    assert!(collect(s().slice(reversed)).is_empty());
    assert!(collect(s().slice(20..)).is_empty());
}

#[test]
fn slice_completes_at_its_end_without_polling_further() {
    // An endless stream: the slice must complete by itself.
    assert_eq!(collect(stream::iter(0..).slice(3..5)), vec![3, 4]);
    let mut polled = 0;
    let v = collect(stream::iter(0..).inspect(|_| polled += 1).slice(1..3));
    assert_eq!((v, polled), (vec![1, 2], 3));
}

#[test]
fn element_at_counts_from_zero() {
    assert_eq!(
        block_on(stream::iter(['a', 'b', 'c']).element_at(0)),
        Some('a')
    );
    assert_eq!(
        block_on(stream::iter(['a', 'b', 'c']).element_at(2)),
        Some('c')
    );
    assert_eq!(block_on(stream::iter(['a']).element_at(1)), None);
}
