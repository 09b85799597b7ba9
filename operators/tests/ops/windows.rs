use futures::{Stream, stream};
use giving_operators::StreamOps;

use super::{at, block_on, collect, ms, stamped};

// ---- buffer ---------------------------------------------------------------------------------

#[test]
fn buffer_groups_by_count_and_flushes_the_partial_tail() {
    assert_eq!(
        collect(stream::iter(1..=5).buffer(2)),
        vec![vec![1, 2], vec![3, 4], vec![5]]
    );
    // An exact multiple leaves no empty buffer at the end.
    assert_eq!(
        collect(stream::iter(1..=4).buffer(2)),
        vec![vec![1, 2], vec![3, 4]]
    );
    // A buffer larger than the stream: one partial buffer.
    assert_eq!(collect(stream::iter(1..=3).buffer(10)), vec![vec![1, 2, 3]]);
    assert!(collect(stream::iter(Vec::<i32>::new()).buffer(3)).is_empty());
    assert_eq!(
        collect(stream::iter(1..=2).buffer(1)),
        vec![vec![1], vec![2]]
    );
}

#[test]
#[should_panic(expected = "count must be at least 1")]
fn buffer_rejects_zero() {
    let _ = stream::iter([1]).buffer(0);
}

#[tokio::test(start_paused = true)]
async fn buffer_emits_as_soon_as_full() {
    let v = stamped(at(&[10, 20, 30, 40, 50]).buffer(2)).await;
    assert_eq!(
        v,
        vec![(20, vec![10, 20]), (40, vec![30, 40]), (50, vec![50])]
    );
}

// ---- buffer_skip ----------------------------------------------------------------------------

#[test]
fn buffer_skip_overlapping() {
    assert_eq!(
        collect(stream::iter(1..=4).buffer_skip(3, 1)),
        vec![vec![1, 2, 3], vec![2, 3, 4], vec![3, 4], vec![4]]
    );
    assert_eq!(
        collect(stream::iter(1..=5).buffer_skip(3, 2)),
        vec![vec![1, 2, 3], vec![3, 4, 5], vec![5]]
    );
}

#[test]
fn buffer_skip_with_gaps_and_equal_to_buffer() {
    assert_eq!(
        collect(stream::iter(1..=7).buffer_skip(2, 3)),
        vec![vec![1, 2], vec![4, 5], vec![7]]
    );
    assert_eq!(
        collect(stream::iter(1..=5).buffer_skip(2, 2)),
        collect(stream::iter(1..=5).buffer(2))
    );
    assert_eq!(
        collect(stream::iter(1..=2).buffer_skip(5, 1)),
        vec![vec![1, 2], vec![2]]
    );
    assert!(collect(stream::iter(Vec::<i32>::new()).buffer_skip(2, 1)).is_empty());
}

#[test]
#[should_panic(expected = "skip must be at least 1")]
fn buffer_skip_rejects_zero_skip() {
    let _ = stream::iter([1]).buffer_skip(1, 0);
}

// ---- pairwise -------------------------------------------------------------------------------

#[test]
fn pairwise_pairs_consecutive_items() {
    assert_eq!(
        collect(stream::iter([1, 2, 4, 8]).pairwise()),
        vec![(1, 2), (2, 4), (4, 8)]
    );
    assert!(collect(stream::iter([1]).pairwise()).is_empty());
    assert!(collect(stream::iter(Vec::<i32>::new()).pairwise()).is_empty());
    assert_eq!(
        Stream::size_hint(&stream::iter(0..5).pairwise()),
        (4, Some(4))
    );
}

// ---- roll -----------------------------------------------------------------------------------

#[test]
fn roll_emits_partial_then_full_windows() {
    assert_eq!(
        collect(stream::iter(1..=5).roll(3)),
        vec![
            vec![1],
            vec![1, 2],
            vec![1, 2, 3],
            vec![2, 3, 4],
            vec![3, 4, 5]
        ]
    );
    // A window larger than the stream never fills.
    assert_eq!(
        collect(stream::iter(1..=2).roll(10)),
        vec![vec![1], vec![1, 2]]
    );
    assert_eq!(
        collect(stream::iter(1..=3).roll(1)),
        vec![vec![1], vec![2], vec![3]]
    );
    assert!(collect(stream::iter(Vec::<i32>::new()).roll(2)).is_empty());
}

#[test]
#[should_panic(expected = "window size must be at least 1")]
fn roll_rejects_zero() {
    let _ = stream::iter([1]).roll(0);
}

// ---- group_by -------------------------------------------------------------------------------

#[test]
fn group_by_emits_each_key_once_in_order_of_first_appearance() {
    let groups = collect(
        stream::iter(["apple", "bob", "avocado", "cat", "banana"]).group_by(|s| s.as_bytes()[0]),
    );
    let keys: Vec<u8> = groups.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, b"abc".to_vec());
    let contents: Vec<Vec<&str>> = groups.into_iter().map(|(_, g)| collect(g)).collect();
    assert_eq!(
        contents,
        vec![vec!["apple", "avocado"], vec!["bob", "banana"], vec!["cat"]]
    );
}

#[test]
fn group_by_a_dropped_group_does_not_disturb_the_others() {
    let mut kept = Vec::new();
    block_on(stream::iter(0..10).group_by(|x| x % 2).for_each(|(k, g)| {
        if k == 1 {
            kept.push(g);
        }
    }));
    assert_eq!(collect(kept.pop().unwrap()), vec![1, 3, 5, 7, 9]);
    assert!(collect(stream::iter(Vec::<i32>::new()).group_by(|x| *x)).is_empty());
}

#[tokio::test(start_paused = true)]
async fn group_by_groups_are_live_streams() {
    let mut outer = std::pin::pin!(at(&[10, 20, 30, 40]).group_by(|t| *t / 25)); // keys 0, 0, 1, 1
    let (k0, g0) = outer.next().await.unwrap();
    let consumer = tokio::spawn(stamped(g0));
    let (k1, g1) = outer.next().await.unwrap();
    assert_eq!((k0, k1), (0, 1));
    assert!(outer.next().await.is_none());
    assert_eq!(consumer.await.unwrap(), vec![(0, 10), (10, 20)]);
    assert_eq!(g1.collect::<Vec<_>>().await, vec![30, 40]);
}

#[tokio::test(start_paused = true)]
async fn group_by_groups_complete_with_the_upstream() {
    let mut outer = std::pin::pin!(at(&[10]).group_by(|_| ()));
    let (_, group) = outer.next().await.unwrap();
    let waiter = tokio::spawn(group.collect::<Vec<_>>());
    tokio::time::sleep(ms(50)).await;
    assert!(!waiter.is_finished());
    assert!(outer.next().await.is_none());
    assert_eq!(waiter.await.unwrap(), vec![10]);
}
