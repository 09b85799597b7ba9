//! The operators Python giving has that were missing: take_last, skip_last, slice with step and
//! negative indices, distinct_until_changed with a key, sort, top/bottom with a key, and
//! count/first/last with a predicate. Expected values are Python's own (`x[2:9:3]`, …),
//! written here as literals.

use futures::executor::block_on;
use futures::stream;
use giving_operators::{ReduceOps, StreamOps};

fn collect<S: futures::Stream>(s: S) -> Vec<S::Item> {
    block_on(s.collect::<Vec<_>>())
}

fn ten() -> stream::Iter<std::ops::Range<i32>> {
    stream::iter(0..10)
}

#[test]
fn take_last_and_skip_last() {
    assert_eq!(collect(ten().take_last(3)), vec![7, 8, 9]);
    assert_eq!(collect(ten().take_last(0)), Vec::<i32>::new());
    assert_eq!(collect(ten().take_last(20)), (0..10).collect::<Vec<_>>());
    assert_eq!(collect(ten().skip_last(7)), vec![0, 1, 2]);
    assert_eq!(collect(ten().skip_last(0)), (0..10).collect::<Vec<_>>());
    assert_eq!(collect(ten().skip_last(20)), Vec::<i32>::new());
}

#[test]
fn slice_by_follows_python_slicing() {
    // x = list(range(10)): x[2:9:3], x[-4:], x[:-7], x[-6:-2:2], x[5:2], x[::4]
    assert_eq!(collect(ten().slice_by(Some(2), Some(9), 3)), vec![2, 5, 8]);
    assert_eq!(collect(ten().slice_by(Some(-4), None, 1)), vec![6, 7, 8, 9]);
    assert_eq!(collect(ten().slice_by(None, Some(-7), 1)), vec![0, 1, 2]);
    assert_eq!(collect(ten().slice_by(Some(-6), Some(-2), 2)), vec![4, 6]);
    assert_eq!(
        collect(ten().slice_by(Some(5), Some(2), 1)),
        Vec::<i32>::new()
    );
    assert_eq!(collect(ten().slice_by(None, None, 4)), vec![0, 4, 8]);
}

#[test]
fn slice_by_with_non_negative_indices_streams_an_endless_upstream() {
    let endless = stream::iter(0..);
    assert_eq!(
        collect(endless.slice_by(Some(3), Some(10), 2)),
        vec![3, 5, 7, 9]
    );
}

#[test]
fn distinct_until_changed_by_key_compares_keys() {
    let words = stream::iter(["a", "b", "cc", "dd", "e", "f"]);
    assert_eq!(
        collect(words.distinct_until_changed_by_key(|w| w.len())),
        vec!["a", "cc", "e"]
    );
}

#[test]
fn sort_and_sort_by_key_are_stable() {
    assert_eq!(collect(stream::iter([5, 3, 9, 1]).sort()), vec![1, 3, 5, 9]);
    // sorted(["bb", "a", "cc", "d"], key=len) == ["a", "d", "bb", "cc"]
    let words = stream::iter(["bb", "a", "cc", "d"]);
    assert_eq!(
        collect(words.sort_by_key(|w| w.len())),
        vec!["a", "d", "bb", "cc"]
    );
}

#[test]
fn top_and_bottom_by_key() {
    let words = || stream::iter(["a", "ccc", "bb", "dd", "eee"]);
    assert_eq!(
        block_on(words().top_by_key(2, |w| w.len())),
        vec!["ccc", "eee"]
    );
    assert_eq!(
        block_on(words().bottom_by_key(2, |w| w.len())),
        vec!["a", "bb"]
    );
    assert_eq!(
        block_on(words().top_by_key(0, |w| w.len())),
        Vec::<&str>::new()
    );
}

#[test]
fn count_first_and_last_with_a_predicate() {
    assert_eq!(block_on(ten().count_where(|x| x % 3 == 0)), 4);
    assert_eq!(block_on(ten().first_where(|x| *x > 6)), Some(7));
    assert_eq!(block_on(ten().last_where(|x| *x < 4)), Some(3));
    assert_eq!(block_on(ten().first_where(|x| *x > 60)), None);
    assert_eq!(block_on(ten().count_where(|x| *x > 60)), 0);
}

#[test]
fn checks_fail_at_the_first_bad_item_without_waiting_for_the_end() {
    // An endless stream: a check that waited for the end would never return.
    let failed = block_on(stream::iter(0..).fail_if(|x| *x == 3, "three")).unwrap_err();
    assert_eq!(failed.message, "three");
    assert_eq!(failed.item.as_deref(), Some("3"));
    let failed = block_on(stream::iter(5..).fail("any item")).unwrap_err();
    assert_eq!(failed.to_string(), "any item: 5");
    assert!(block_on(stream::iter([true, true]).fail_if_false("all true")).is_ok());
    assert!(block_on(stream::iter([1]).fail_if_empty("one")).is_ok());
    assert!(block_on(stream::empty::<i32>().fail("nothing")).is_ok());
    let failed = block_on(stream::empty::<i32>().fail_if_empty("empty")).unwrap_err();
    assert_eq!(failed.item, None);
}
