//! Adapters say when they have ended (`FusedStream`), so `select!` loops can stop polling them,
//! and show themselves with `Debug`.

use std::time::Duration;

use futures::stream::{self, FusedStream};
use giving_operators::{ReduceOps, StreamOps};

/// Drains `stream`, checking that it says it ended exactly when it has.
async fn drain<S: FusedStream + Unpin>(mut stream: S) -> usize {
    let mut n = 0;
    assert!(!stream.is_terminated(), "not ended before the first poll");
    while stream.next().await.is_some() {
        n += 1;
    }
    assert!(stream.is_terminated(), "ended after returning None");
    n
}

fn items() -> stream::Fuse<stream::Iter<std::vec::IntoIter<u32>>> {
    stream::iter(vec![1, 2, 2, 3, 4, 4, 5]).fuse()
}

#[tokio::test(start_paused = true)]
async fn adapters_are_terminated_once_they_have_ended() {
    assert_eq!(drain(items().filter(|x| x % 2 == 0)).await, 4);
    assert_eq!(drain(items().filter_map(|x| (x > 2).then_some(x))).await, 4);
    assert_eq!(drain(items().buffer(3)).await, 3);
    assert_eq!(drain(items().pairwise()).await, 6);
    assert_eq!(drain(items().distinct()).await, 5);
    assert_eq!(drain(items().distinct_until_changed()).await, 5);
    assert_eq!(drain(items().roll(2)).await, 7);
    assert_eq!(drain(items().slice(1..3)).await, 2);
    assert_eq!(drain(items().take_while(|x| *x < 3)).await, 3);
    assert_eq!(drain(items().skip_while(|x| *x < 3)).await, 4);
    assert_eq!(drain(items().min_scan()).await, 7);
    assert_eq!(drain(items().throttle(Duration::from_secs(1))).await, 1);
    assert_eq!(drain(items().debounce(Duration::from_secs(1))).await, 1);
    assert_eq!(drain(items().sample(Duration::from_secs(1))).await, 1);
    assert_eq!(
        drain(items().buffer_time_count(Duration::from_secs(1), 100)).await,
        1
    );
    assert_eq!(drain(items().timeout(Duration::from_secs(1))).await, 7);
    assert_eq!(drain(items().combine_latest(items())).await, 13);
    assert_eq!(drain(items().with_latest_from(items())).await, 7);
}

#[tokio::test]
async fn a_reduction_is_a_fused_future_and_stream() {
    use futures::future::FusedFuture;
    let mut min = items().min();
    assert!(!FusedFuture::is_terminated(&min));
    assert_eq!((&mut min).await, Some(1));
    assert!(FusedFuture::is_terminated(&min));
}

#[test]
fn adapters_show_their_upstream() {
    let shown = format!("{:?}", items().buffer(3));
    assert!(
        shown.starts_with("Buffer") && shown.contains("count: 3"),
        "{shown}"
    );
    let shown = format!("{:?}", items().filter(|x| *x > 1));
    assert!(
        shown.starts_with("Filter") && shown.contains("stream"),
        "{shown}"
    );
    let shown = format!("{:?}", items().min_scan());
    assert!(shown.starts_with("Running"), "{shown}");
}
