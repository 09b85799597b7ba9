//! Delivery through the scope's feed, at volume and under concurrency: many lossless
//! subscribers, subscriptions mid-stream, bounded subscribers beside lossless ones, and a randomized stress of scopes, threads and
//! subscriptions that checks no event is lost, duplicated or reordered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use giving::prelude::*;
use giving::{Delivery, Given, give, given};

fn drain(stream: giving::EventStream) -> Vec<u64> {
    futures::executor::block_on(stream.key::<u64>("i").collect())
}

#[test]
fn ten_subscribers_receive_a_million_events_each_complete_and_in_order() {
    const EVENTS: u64 = 1_000_000;
    let gv = given();
    let consumers: Vec<_> = (0..10)
        .map(|_| {
            let stream = gv.stream();
            std::thread::spawn(move || {
                let mut expected = 0u64;
                let mut events = stream.key::<u64>("i");
                futures::executor::block_on(async {
                    while let Some(i) = events.next().await {
                        assert_eq!(i, expected, "in order, none missing");
                        expected += 1;
                    }
                });
                expected
            })
        })
        .collect();
    for i in 0..EVENTS {
        give!(i);
    }
    gv.finish().unwrap();
    for consumer in consumers {
        assert_eq!(consumer.join().unwrap(), EVENTS);
    }
}

#[test]
fn a_subscriber_added_mid_stream_sees_exactly_what_is_given_after() {
    let gv = given();
    let early = gv.stream();
    for i in 0..1000u64 {
        give!(i);
    }
    let late = gv.stream();
    for i in 1000..1500u64 {
        give!(i);
    }
    gv.finish().unwrap();
    assert_eq!(drain(early), (0..1500).collect::<Vec<_>>());
    assert_eq!(drain(late), (1000..1500).collect::<Vec<_>>());
}

#[test]
fn a_bounded_subscriber_drops_and_counts_exactly_while_a_lossless_one_loses_nothing() {
    let gv = given();
    let fast = gv.stream();
    let slow = gv.stream_with(Delivery::Bounded(100));
    let lag = slow.lag();
    for i in 0..10_000u64 {
        give!(i);
    }
    assert_eq!(lag.dropped(), 9_900);
    assert_eq!(lag.pending(), 100);
    gv.finish().unwrap();
    assert_eq!(drain(fast), (0..10_000).collect::<Vec<_>>());
    assert_eq!(drain(slow), (9_900..10_000).collect::<Vec<_>>());
}

/// Drains `stream` by reference ([`EventStream::next_ref`](giving::EventStream::next_ref)).
fn drain_by_reference(mut stream: giving::EventStream) -> Vec<u64> {
    futures::executor::block_on(async {
        let mut seen = Vec::new();
        while let Some(event) = stream.next_ref().await {
            seen.push(event.get_as::<u64>("i").unwrap());
        }
        seen
    })
}

#[test]
fn subscribers_reading_by_reference_see_what_those_taking_by_value_see() {
    const EVENTS: u64 = 200_000;
    let gv = given();
    let lossless: Vec<_> = (0..6)
        .map(|n| {
            let stream = gv.stream();
            std::thread::spawn(move || {
                if n % 2 == 0 {
                    drain_by_reference(stream)
                } else {
                    drain(stream)
                }
            })
        })
        .collect();
    let bounded = gv.stream_with(Delivery::Bounded(64));
    let lag = bounded.lag();
    let bounded = std::thread::spawn(move || drain_by_reference(bounded));
    for i in 0..EVENTS {
        give!(i);
    }
    gv.finish().unwrap();
    for consumer in lossless {
        assert_eq!(consumer.join().unwrap(), (0..EVENTS).collect::<Vec<_>>());
    }
    let bounded = bounded.join().unwrap();
    assert!(bounded.windows(2).all(|w| w[0] < w[1]), "in order");
    assert_eq!(bounded.len() as u64 + lag.dropped(), EVENTS);
}

#[test]
fn an_event_kept_from_a_lent_one_outlives_its_stream() {
    let gv = given();
    let mut stream = gv.stream();
    // More than a chunk of the feed, so the reader moves on from the chunk that held it.
    for i in 0..1000u64 {
        give!(i);
    }
    gv.finish().unwrap();
    let kept = futures::executor::block_on(async {
        let first = stream.next_ref().await.unwrap().clone();
        while stream.next_ref().await.is_some() {}
        first
    });
    assert!(
        futures::executor::block_on(stream.next_ref()).is_none(),
        "ended"
    );
    drop(stream);
    assert_eq!(kept.get_as::<u64>("i").unwrap(), 0);
}

/// A small deterministic generator (the stress test must be reproducible from its seed).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// What one subscriber saw, per giving thread: must be a run of consecutive sequence numbers.
fn check_runs(seen: &[(u64, u64)], who: &str) {
    let mut last: HashMap<u64, u64> = HashMap::new();
    for &(thread, seq) in seen {
        if let Some(&previous) = last.get(&thread) {
            assert_eq!(
                seq,
                previous + 1,
                "{who}: thread {thread} gave {previous} then {seq} (lost, duplicated or reordered)"
            );
        }
        last.insert(thread, seq);
    }
}

/// `(thread, seq)` of the stress test's events; `None` for events other tests give (the
/// scope is global, and tests of this file run in parallel).
/// `(thread, seq)` of an event given by a producer of round `run`. Tests of this binary run
/// side by side and a global scope receives every thread's events: a round reads its own only.
fn tagged(event: &giving::Event, run: u64) -> Option<(u64, u64)> {
    if event.get_as::<u64>("run").ok()? != run {
        return None;
    }
    Some((
        event.get_as::<u64>("thread").ok()?,
        event.get_as::<u64>("seq").ok()?,
    ))
}

fn collect_tagged(stream: giving::EventStream, run: u64) -> Vec<(u64, u64)> {
    futures::executor::block_on(stream.filter_map(|e| tagged(&e, run)).collect())
}

/// Counts a churner out when it leaves, however it leaves: one whose check fails must not
/// leave the main thread giving stop markers forever (the test would grow until killed).
struct Leaving<'a>(&'a AtomicUsize);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Several giving threads give `(thread, seq)` into a global scope while other threads
/// subscribe, read a random number of events and drop their streams, over many short scopes
/// with randomized pauses: every subscriber must see, per thread, consecutive sequence
/// numbers; one that lives to the end of the scope must see each thread's events up to its
/// last, and one from the start all of them.
#[test]
fn randomized_scopes_threads_and_subscriptions_lose_duplicate_and_reorder_nothing() {
    lose_duplicate_and_reorder_nothing(Given::global, 1);
}

/// The same with a thread scope that every producer enters through a handle: each giving
/// thread then has one scope with only lossless subscribers, the give path's shortcut.
#[test]
fn randomized_threads_entering_one_thread_scope_lose_duplicate_and_reorder_nothing() {
    lose_duplicate_and_reorder_nothing(given, 2);
}

/// The stress of the two tests above, for scopes `open` makes; `kind` keeps their rounds'
/// events apart.
fn lose_duplicate_and_reorder_nothing(open: fn() -> Given, kind: u64) {
    const ROUNDS: u64 = 20;
    const PRODUCERS: u64 = 3;
    const PER_PRODUCER: u64 = 20_000;
    for round in 0..ROUNDS {
        let run = kind << 32 | round;
        let gv = open();
        let handle = gv.handle();
        let keeper = gv.stream();
        let producing = AtomicBool::new(true);
        let churners = AtomicUsize::new(2);
        let late = std::thread::scope(|scope| {
            let producers: Vec<_> = (0..PRODUCERS)
                .map(|thread| {
                    let handle = handle.clone();
                    scope.spawn(move || {
                        // A no-op for a global scope, which every thread gives to.
                        let _entered = handle.enter();
                        let mut rng = Rng(0x2545_f491 ^ (round * 31 + thread + 1));
                        for seq in 0..PER_PRODUCER {
                            give!(thread, seq, run);
                            if rng.below(2_000) == 0 {
                                std::thread::yield_now();
                            }
                        }
                    })
                })
                .collect();
            // Subscribers that come and go while the producers give. One that subscribed
            // near the end would wait forever for events nobody gives: the main thread
            // gives `churn_stop` markers once the producers are done, until every churner
            // has left.
            let churners = &churners;
            for churner in 0..2u64 {
                let (gv, producing) = (&gv, &producing);
                scope.spawn(move || {
                    let _leaving = Leaving(churners);
                    let mut rng = Rng(0x9e37_79b9 ^ (round * 7 + churner + 1));
                    while producing.load(Ordering::Relaxed) {
                        let stream = gv.stream();
                        let take = rng.below(3_000) as usize;
                        let seen: Vec<(u64, u64)> = futures::executor::block_on(
                            stream
                                .take_while(|e| !e.has("churn_stop"))
                                .filter_map(|e| tagged(&e, run))
                                .take(take)
                                .collect(),
                        );
                        check_runs(&seen, "a short-lived subscriber");
                    }
                });
            }
            // A subscriber that joins mid-stream.
            std::thread::yield_now();
            let late = gv.stream();
            for producer in producers {
                producer.join().unwrap();
            }
            producing.store(false, Ordering::Relaxed);
            while churners.load(Ordering::SeqCst) != 0 {
                give!(churn_stop = true);
                std::thread::yield_now();
            }
            late
        });
        gv.finish().unwrap();
        for (stream, whole) in [(keeper, true), (late, false)] {
            let seen = collect_tagged(stream, run);
            check_runs(&seen, "a subscriber to the end");
            for thread in 0..PRODUCERS {
                let mine: Vec<u64> = seen
                    .iter()
                    .filter(|(t, _)| *t == thread)
                    .map(|(_, s)| *s)
                    .collect();
                // The late subscriber may come after a thread gave its last event (the main
                // thread can be descheduled for milliseconds on a loaded machine): then it sees
                // none of that thread's, which is right. What it does see must run to the end.
                if whole || !mine.is_empty() {
                    assert_eq!(
                        mine.last(),
                        Some(&(PER_PRODUCER - 1)),
                        "round {round}: every thread's last event ({})",
                        if whole {
                            "subscribed first"
                        } else {
                            "subscribed late"
                        }
                    );
                }
                if whole {
                    assert_eq!(
                        mine.len() as u64,
                        PER_PRODUCER,
                        "round {round}: from the start"
                    );
                }
            }
        }
    }
}
