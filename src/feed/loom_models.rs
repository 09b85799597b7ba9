//! Loom models of the feed's append/park/wake protocol (the module doc's "Why it is correct"):
//! loom runs each model under every interleaving of its threads' atomic and mutex operations
//! (up to `LOOM_MAX_PREEMPTIONS` preemptions), so a lost wake-up shows as a deadlock and a
//! missed or reordered event as a failed assertion.
//!
//! Run: `RUSTFLAGS="--cfg giving_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom
//! cargo test -p giving --lib --release feed::loom_models` (as `.ci/run` does).
//!
//! What is modelled: the slots' `ready` flags, the reader's end and counts (loom atomics), the
//! feed's mutex, its owner's claim and the asymmetric fences that hand it over and guard the
//! wake-up (both sides `SeqCst` fences under loom, see src/feed/owner.rs), the chunks' counted references and their once-set `next` links (loom's `Arc`
//! and a loom-built `OnceLock`, see src/sync.rs), and wakers (`loom::future::block_on` parks
//! its thread until woken; a park nobody wakes is reported as a deadlock). What is not: the
//! slots' `UnsafeCell`s are std's, so loom checks the orderings that guard them, not each
//! cell access; the `Feed` and `ReaderState` handles are std `Arc`s (`subscribe` takes
//! `self: &Arc<Self>`, which loom's `Arc` cannot be); the events come from the arena, whose
//! atomics are std's (the arena's unit tests run under Miri instead); and no reader spins
//! before it parks (the spin only looks, and each look multiplies the interleavings).

use std::future::poll_fn;
use std::sync::Arc;

use loom::thread;

use super::*;

fn event(i: u64) -> Event {
    Event::new([("i", crate::Value::from(i))])
}

/// Reads `reader` to its end, parking (through loom) whenever nothing is there; `pace`d, it
/// sleeps instead, and under loom the pacer's ticks never come, so only an end can wake it.
fn drain_with(reader: &mut FeedReader, pace: Option<std::time::Duration>) -> Vec<u64> {
    let mut seen = Vec::new();
    while loom::future::block_on(poll_fn(|cx| reader.poll_advance(cx, pace))) {
        seen.push(reader.current().get_as::<u64>("i").unwrap_or(u64::MAX));
    }
    seen
}

#[test]
fn a_parked_reader_is_woken_for_every_event_and_sees_them_in_order() {
    loom::model(|| {
        let feed = Arc::new(Feed::new());
        let mut reader = feed.subscribe();
        let giver = thread::spawn({
            let feed = feed.clone();
            move || {
                // Three events: the third starts a second chunk (chunks of two under loom).
                for i in 0..3 {
                    feed.push(event(i), NO_SKIP);
                }
                feed.close();
            }
        });
        assert_eq!(drain(&mut reader), [0, 1, 2]);
        giver.join().unwrap();
    });
}

#[test]
fn closing_the_feed_wakes_a_parked_reader_which_then_ends() {
    loom::model(|| {
        let feed = Arc::new(Feed::new());
        let mut reader = feed.subscribe();
        let closer = thread::spawn({
            let feed = feed.clone();
            move || {
                feed.push(event(7), NO_SKIP);
                feed.close();
                // Appended after the close: never seen.
                feed.push(event(8), NO_SKIP);
            }
        });
        assert_eq!(drain(&mut reader), [7]);
        closer.join().unwrap();
    });
}

#[test]
fn closing_one_reader_wakes_it_where_it_parked_and_the_others_go_on() {
    loom::model(|| {
        let feed = Arc::new(Feed::new());
        let mut derived = feed.subscribe();
        let mut sink = feed.subscribe();
        let state = derived.state().clone();
        let closer = thread::spawn({
            let feed = feed.clone();
            move || {
                feed.push(event(1), NO_SKIP);
                feed.close_reader(&state);
                feed.push(event(2), NO_SKIP);
                feed.close();
            }
        });
        // `derived` ends at the close, wherever it parked: it saw 1 and nothing after.
        assert_eq!(drain(&mut derived), [1]);
        assert_eq!(drain(&mut sink), [1, 2]);
        closer.join().unwrap();
    });
}

/// A first reader drained with `drain_first` while the giver gives two events and a second
/// reader joins: the first sees both, the joiner a suffix, each in order.
fn a_reader_joins_while_events_are_given(drain_first: fn(&mut FeedReader) -> Vec<u64>) {
    loom::model(move || {
        let feed = Arc::new(Feed::new());
        let mut first = feed.subscribe();
        // Two events: the joiner's subscription takes the claim the giver made on its first
        // append away (and waits for an append in progress); the giver claims it again.
        let giver = thread::spawn({
            let feed = feed.clone();
            move || {
                for i in 0..2 {
                    feed.push(event(i), NO_SKIP);
                }
                feed.close();
            }
        });
        let joiner = thread::spawn({
            let feed = feed.clone();
            move || {
                let mut second = feed.subscribe();
                drain(&mut second)
            }
        });
        assert_eq!(drain_first(&mut first), [0, 1]);
        // The second reader sees a suffix: everything appended after it subscribed, in order.
        let seen = joiner.join().unwrap();
        assert!([&[0, 1][..], &[1], &[]].contains(&&seen[..]), "{seen:?}");
        giver.join().unwrap();
    });
}

#[test]
fn a_reader_joining_while_events_are_given_sees_every_later_one_in_order() {
    a_reader_joins_while_events_are_given(drain);
}

/// Reads `reader` to its end taking each event by value (moved out of a slot it alone sees).
fn drain_by_value(reader: &mut FeedReader) -> Vec<u64> {
    let mut seen = Vec::new();
    while loom::future::block_on(poll_fn(|cx| reader.poll_advance(cx, None))) {
        let taken = reader.take_current();
        seen.push(taken.get_as::<u64>("i").unwrap_or(u64::MAX));
    }
    seen
}

#[test]
fn a_reader_taking_by_value_never_moves_out_an_event_that_a_joining_reader_will_see() {
    // Events appended before the joiner subscribes are the first reader's alone (moved out
    // when taken), the later ones are shared (cloned), and `current` asserts that no reader
    // reaches a slot moved out.
    a_reader_joins_while_events_are_given(drain_by_value);
}

#[test]
fn a_second_giving_thread_takes_the_feed_from_its_owner_and_nothing_is_lost_or_reordered() {
    loom::model(|| {
        let feed = Arc::new(Feed::new());
        let mut reader = feed.subscribe();
        // The first thread claims the feed on its first append and appends its second without
        // the lock, while the second thread takes the claim away (the revoke, and its wait
        // for an append in progress) to give its own event, then closes the feed.
        let owner = thread::spawn({
            let feed = feed.clone();
            move || {
                feed.push(event(0), NO_SKIP);
                feed.push(event(1), NO_SKIP);
            }
        });
        let second = thread::spawn({
            let feed = feed.clone();
            move || {
                feed.push(event(10), NO_SKIP);
                owner.join().unwrap();
                feed.close();
            }
        });
        let seen = drain(&mut reader);
        second.join().unwrap();
        let owners: Vec<u64> = seen.iter().copied().filter(|&i| i < 10).collect();
        assert_eq!(owners, [0, 1], "{seen:?}");
        assert_eq!(seen.len(), 3, "{seen:?}");
    });
}

#[test]
fn a_reader_parking_takes_the_claim_away_so_that_the_next_append_wakes_it() {
    loom::model(|| {
        let feed = Arc::new(Feed::new());
        let mut reader = feed.subscribe();
        let taken = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let giver = thread::spawn({
            let feed = feed.clone();
            let taken = taken.clone();
            move || {
                // The first append claims the feed (under the lock); the second is lock-free,
                // unless the reader parked in between and took the claim away.
                feed.push(event(0), NO_SKIP);
                feed.push(event(1), NO_SKIP);
                // Nothing else wakes the reader until it has both: a lock-free append while it
                // is parked would leave it parked and this loop spinning until loom gives up.
                while taken.load(Ordering::Acquire) < 2 {
                    thread::yield_now();
                }
                feed.close();
            }
        });
        let mut seen = Vec::new();
        while loom::future::block_on(poll_fn(|cx| reader.poll_advance(cx, None))) {
            seen.push(reader.current().get_as::<u64>("i").unwrap_or(u64::MAX));
            taken.store(seen.len(), Ordering::Release);
        }
        assert_eq!(seen, [0, 1]);
        giver.join().unwrap();
    });
}

/// Reads `reader` to its end, parking whenever nothing is there.
fn drain(reader: &mut FeedReader) -> Vec<u64> {
    drain_with(reader, None)
}

/// Reads a paced `reader` to its end.
fn drain_paced(reader: &mut FeedReader) -> Vec<u64> {
    drain_with(reader, Some(std::time::Duration::from_millis(1)))
}

#[test]
fn a_paced_reader_never_woken_by_appends_sees_every_event_once_the_feed_closes() {
    loom::model(|| {
        let feed = Arc::new(Feed::new());
        let mut reader = feed.subscribe();
        let giver = thread::spawn({
            let feed = feed.clone();
            move || {
                // Claimed at once under loom: appends without the lock, racing the sleeper.
                for i in 0..3 {
                    feed.push(event(i), NO_SKIP);
                }
                feed.close();
            }
        });
        assert_eq!(drain_paced(&mut reader), [0, 1, 2]);
        giver.join().unwrap();
    });
}

#[test]
fn closing_a_paced_reader_wakes_it_where_it_sleeps() {
    loom::model(|| {
        let feed = Arc::new(Feed::new());
        let mut reader = feed.subscribe();
        let state = reader.state().clone();
        let closer = thread::spawn({
            let feed = feed.clone();
            move || {
                feed.push(event(1), NO_SKIP);
                feed.close_reader(&state);
                feed.push(event(2), NO_SKIP);
            }
        });
        assert_eq!(drain_paced(&mut reader), [1]);
        closer.join().unwrap();
        feed.close();
    });
}
