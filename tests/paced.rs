//! Paced streams (`EventStream::paced`): the giving thread never wakes them, they take what
//! was given in batches at their ticks, lose nothing, and an end wakes them at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use giving::prelude::*;
use giving::{Delivery, Event, EventStream, give, given};

/// A period no test lives to see a tick of: ticks fall on a grid that starts when the
/// process first paces a stream, so the first one is an hour after that.
const NEVER: Duration = Duration::from_secs(3600);

/// Counts its wake-ups.
#[derive(Default)]
struct Wakes(AtomicUsize);

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Wakes {
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Takes every event ready now with `waker`, until the stream would wait.
fn take_ready(stream: &mut EventStream, waker: &Waker) -> (Vec<u64>, bool) {
    let mut cx = Context::from_waker(waker);
    let mut seen = Vec::new();
    loop {
        match stream.poll_next_ref(&mut cx) {
            Poll::Ready(Some(event)) => seen.push(event.get_as::<u64>("i").unwrap()),
            Poll::Ready(None) => return (seen, true),
            Poll::Pending => return (seen, false),
        }
    }
}

/// Gives 100 events to a stream that waits, then checks who woke it: `paced` or not.
fn wakes_after_giving(stream: EventStream, paced: bool) -> (usize, Vec<u64>) {
    let mut stream = if paced { stream.paced(NEVER) } else { stream };
    let wakes = Arc::new(Wakes::default());
    let waker = Waker::from(wakes.clone());
    assert_eq!(take_ready(&mut stream, &waker), (vec![], false));
    for i in 0..100u64 {
        give!(i);
    }
    let woken = wakes.count();
    let (seen, ended) = take_ready(&mut stream, &waker);
    assert!(!ended);
    (woken, seen)
}

#[test]
fn the_giving_thread_never_wakes_a_paced_stream_which_takes_everything_at_its_next_poll() {
    for delivery in [Delivery::Lossless, Delivery::Bounded(1000)] {
        let gv = given();
        let (woken, seen) = wakes_after_giving(gv.stream_with(delivery), true);
        assert_eq!(woken, 0, "{delivery:?}: a give woke a paced stream");
        assert_eq!(seen, (0..100).collect::<Vec<_>>(), "{delivery:?}");
        gv.finish().unwrap();
    }
}

#[test]
fn a_stream_not_paced_is_woken_by_the_giving_thread() {
    // The contrast that shows the test above can fail.
    for delivery in [Delivery::Lossless, Delivery::Bounded(1000)] {
        let gv = given();
        let (woken, seen) = wakes_after_giving(gv.stream_with(delivery), false);
        assert!(woken >= 1, "{delivery:?}: nobody woke the waiting stream");
        assert_eq!(seen.len(), 100, "{delivery:?}");
        gv.finish().unwrap();
    }
}

#[test]
fn the_end_of_the_scope_wakes_a_sleeping_paced_stream_at_once() {
    for delivery in [Delivery::Lossless, Delivery::Latest] {
        let gv = given();
        let mut stream = gv.stream_with(delivery).paced(NEVER);
        let wakes = Arc::new(Wakes::default());
        let waker = Waker::from(wakes.clone());
        assert_eq!(take_ready(&mut stream, &waker), (vec![], false));
        give!(i = 7u64);
        gv.finish().unwrap();
        assert_eq!(wakes.count(), 1, "{delivery:?}: the end did not wake it");
        assert_eq!(
            take_ready(&mut stream, &waker),
            (vec![7], true),
            "{delivery:?}"
        );
    }
}

#[test]
fn a_paced_derivation_ends_when_its_input_is_closed_not_at_its_tick() {
    // `finish` closes a derivation's input and waits for it: a sleeping input must be woken
    // by that close, or `finish` would wait for the tick (an hour).
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let gv = given();
        let counts = gv.spawn(gv.stream().key::<u64>("count").collect::<Vec<_>>());
        let _derived = gv.derive(|events, giver| async move {
            let n = events.paced(NEVER).where_(["i"]).count().await;
            giver.give(Event::builder().field("count", n).build());
        });
        for i in 0..10u64 {
            give!(i);
        }
        gv.finish().unwrap();
        let _ = done.send(counts.join().unwrap());
    });
    let counts = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("finish waited for the paced derivation's tick");
    assert_eq!(counts, [10]);
}

#[test]
fn paced_streams_receive_every_event_in_order_while_the_loop_gives() {
    const N: u64 = 200_000;
    let gv = given();
    let period = Duration::from_millis(2);
    let lossless = gv.spawn(
        gv.stream()
            .paced(period)
            .key::<u64>("i")
            .collect::<Vec<_>>(),
    );
    let batches = Arc::new(AtomicUsize::new(0));
    let counted = batches.clone();
    let by_ref = gv.stream().paced(period);
    let summed = gv.spawn(async move {
        let mut by_ref = by_ref;
        let mut sum = 0u64;
        while let Some(event) = by_ref.next_ref().await {
            sum += event.get_as::<u64>("i").unwrap();
            if by_ref.pending() == 0 {
                counted.fetch_add(1, Ordering::Relaxed);
            }
        }
        sum
    });
    for i in 0..N {
        give!(i);
        if i % 20_000 == 0 {
            // Pauses longer than the period: the streams catch up and sleep in between.
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    gv.finish().unwrap();
    assert_eq!(lossless.join().unwrap(), (0..N).collect::<Vec<_>>());
    assert_eq!(summed.join().unwrap(), N * (N - 1) / 2);
    // Read in batches: far fewer catch-ups than events.
    let batches = batches.load(Ordering::Relaxed);
    assert!(
        (1..N as usize / 100).contains(&batches),
        "{batches} batches for {N} events"
    );
}
