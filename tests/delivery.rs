//! Delivery policies: lossless under a slow consumer, bounded with an exact drop count,
//! latest-only; the give side never blocks.

use std::time::Duration;

use giving::prelude::*;
use giving::{Delivery, give, given};

#[test]
fn a_million_events_reach_a_slow_lossless_consumer_complete_and_in_order() {
    const N: u64 = 1_000_000;
    let gv = given();
    let events = gv.stream();
    let consumer = std::thread::spawn(move || {
        futures::executor::block_on(async move {
            let mut events = events.key::<u64>("i");
            let mut expected = 0;
            while let Some(i) = events.next().await {
                assert_eq!(i, expected, "events out of order");
                expected += 1;
                if i % 50_000 == 0 {
                    // Deliberately slow: the producer runs far ahead meanwhile.
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            expected
        })
    });
    for i in 0..N {
        give!(i);
    }
    gv.finish().unwrap();
    assert_eq!(consumer.join().unwrap(), N);
}

#[test]
fn bounded_delivery_drops_the_oldest_and_counts_exactly() {
    let gv = given();
    let events = gv.stream_with(Delivery::Bounded(100));
    let lag = events.lag();
    for i in 0..1000u64 {
        give!(i);
    }
    assert_eq!(lag.dropped(), 900);
    assert_eq!(lag.pending(), 100);
    gv.finish().unwrap();
    let kept: Vec<u64> = futures::executor::block_on(events.key::<u64>("i").collect());
    assert_eq!(kept, (900..1000).collect::<Vec<_>>());
    assert_eq!(lag.dropped(), 900);
}

#[test]
fn latest_delivery_keeps_only_the_newest() {
    let gv = given();
    let events = gv.stream_with(Delivery::Latest);
    for i in 0..10u64 {
        give!(i);
    }
    assert_eq!(events.dropped(), 9);
    gv.finish().unwrap();
    let kept: Vec<u64> = futures::executor::block_on(events.key::<u64>("i").collect());
    assert_eq!(kept, vec![9]);
}

#[test]
fn each_subscriber_has_its_own_policy() {
    let gv = given();
    let all = gv.stream();
    let latest = gv.stream_with(Delivery::Latest);
    for i in 0..5u64 {
        give!(i);
    }
    gv.finish().unwrap();
    let all: Vec<u64> = futures::executor::block_on(all.key::<u64>("i").collect());
    let latest: Vec<u64> = futures::executor::block_on(latest.key::<u64>("i").collect());
    assert_eq!(all, vec![0, 1, 2, 3, 4]);
    assert_eq!(latest, vec![4]);
}

#[test]
fn a_dropped_stream_unsubscribes_and_giving_goes_on() {
    let gv = given();
    let events = gv.stream();
    let lag = events.lag();
    give!(x = 1);
    drop(events);
    for x in 0..1000 {
        give!(x);
    }
    assert_eq!(lag.pending(), 0, "nothing is queued for a dropped stream");
    gv.finish().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_parked_on_an_empty_queue_is_woken() {
    let gv = given();
    let mut events = gv.stream().key::<u64>("i");
    let handle = gv.handle();
    let producer = std::thread::spawn(move || {
        let _inside = handle.enter();
        for i in 0..1000u64 {
            give!(i);
            if i % 100 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    });
    let mut received = 0;
    while received < 1000 {
        let i = events.next().await.unwrap();
        assert_eq!(i, received);
        received += 1;
    }
    producer.join().unwrap();
    gv.finish_async().await.unwrap();
    assert_eq!(events.next().await, None);
}

/// Counts how many of its values are alive: a lazy value is freed with the last event holding
/// it, so the count shows whether queued events were freed.
struct Alive(std::sync::Arc<std::sync::atomic::AtomicI64>);

impl Alive {
    fn new(count: &std::sync::Arc<std::sync::atomic::AtomicI64>) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Alive(count.clone())
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl giving::Resolve for Alive {
    fn resolve(&self) -> Result<giving::Value, giving::ResolveError> {
        Ok(giving::Value::Null)
    }
}

#[test]
fn dropping_a_stream_frees_its_queue_at_once_even_if_the_loop_never_gives_again() {
    let alive = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
    let gv = given();
    let never_read = gv.stream();
    for _ in 0..10_000 {
        let payload = giving::Value::lazy(Alive::new(&alive));
        give!(payload); // the event holds a clone; the binding's copy ends with the iteration
    }
    assert_eq!(alive.load(std::sync::atomic::Ordering::SeqCst), 10_000);
    drop(never_read);
    // The giving thread has not given since: its cached route still names the queue.
    assert_eq!(
        alive.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the queued events were freed when the stream was dropped"
    );
    // Giving again reaches nobody and keeps nothing.
    let payload = giving::Value::lazy(Alive::new(&alive));
    give!(payload);
    drop(payload);
    assert_eq!(alive.load(std::sync::atomic::Ordering::SeqCst), 0);
    gv.finish().unwrap();
}

/// A loop gives steadily into a scope whose only subscriber reads the feed (the give path's
/// one-feed plan, decided once per change); a bounded subscription made on another thread in
/// the middle must receive every event given after it was made, and a second lossless one
/// made there too. The giving thread learns of the change through the routing epoch alone.
#[test]
fn subscriptions_made_on_another_thread_reach_a_loop_that_is_already_giving() {
    const N: u64 = 10_000;
    const AT: u64 = 4_000;
    let gv = given();
    let first = gv.stream();
    let (later_bounded, later_lossless) = std::thread::scope(|scope| {
        let (ask, asked) = std::sync::mpsc::channel::<()>();
        let (answer, answered) = std::sync::mpsc::channel();
        let gv = &gv;
        let subscriber = scope.spawn(move || {
            asked.recv().unwrap();
            let streams = (gv.stream_with(Delivery::Bounded(N as usize)), gv.stream());
            answer.send(()).unwrap();
            streams
        });
        for i in 0..N {
            if i == AT {
                ask.send(()).unwrap();
                answered.recv().unwrap();
            }
            give!(i);
        }
        subscriber.join().unwrap()
    });
    gv.finish().unwrap();
    let collect = |stream: giving::EventStream| -> Vec<u64> {
        futures::executor::block_on(stream.key::<u64>("i").collect())
    };
    for (stream, from, which) in [
        (first, 0, "the first"),
        (later_bounded, AT, "the later bounded"),
        (later_lossless, AT, "the later lossless"),
    ] {
        let seen = collect(stream);
        assert!(
            seen.iter().copied().eq(from..N),
            "{which} subscriber saw {} events ({:?}…), not {from}..{N}",
            seen.len(),
            seen.first()
        );
    }
}
