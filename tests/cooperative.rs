//! A stream that is behind always has an event ready; it must still let the other pipelines
//! on its worker run (tokio's budget), or a derivation waiting on them starves: the early
//! stop that never saw the rate it counts while the loop ran on (CI, 2026-11-27).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt};
use giving::{Delivery, Event, EventStream, give, given};

const GIVEN: u64 = 10_000;

/// The most events a reader behind may take before its task yields: tokio's budget (128
/// units per task poll), charged once per event from a bounded queue and once per run of up
/// to 8 events from the feed (src/feed.rs, `RUN`).
const YIELDS_WITHIN: u64 = 128 * 8;

/// Reads `stream` on a one-thread runtime beside a task that only marks that it ran; returns
/// how many events the reader had taken when it first saw the mark.
fn events_read_before_the_other_task_ran<S>(stream: S) -> u64
where
    S: Stream<Item = Event> + Send + Unpin + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    runtime.block_on(async {
        let reader = tokio::spawn({
            let ran = ran.clone();
            async move {
                let mut stream = stream;
                let mut read = 0u64;
                while stream.next().await.is_some() {
                    if ran.load(Ordering::SeqCst) {
                        return read;
                    }
                    read += 1;
                }
                read
            }
        });
        let other = tokio::spawn({
            let ran = ran.clone();
            async move { ran.store(true, Ordering::SeqCst) }
        });
        let read = reader.await.unwrap();
        other.await.unwrap();
        read
    })
}

fn given_ahead(delivery: Delivery) -> EventStream {
    let gv = given();
    let stream = gv.stream_with(delivery);
    for i in 0..GIVEN {
        give!(i);
    }
    gv.finish().unwrap();
    stream
}

#[test]
fn a_reader_behind_on_the_feed_lets_the_other_tasks_run() {
    let read = events_read_before_the_other_task_ran(given_ahead(Delivery::Lossless));
    assert!(
        read <= YIELDS_WITHIN,
        "the other task ran only after {read} events"
    );
}

#[test]
fn a_reader_behind_on_a_bounded_queue_lets_the_other_tasks_run() {
    let read =
        events_read_before_the_other_task_ran(given_ahead(Delivery::Bounded(GIVEN as usize)));
    assert!(
        read <= YIELDS_WITHIN,
        "the other task ran only after {read} events"
    );
}

#[test]
fn a_paced_reader_behind_lets_the_other_tasks_run() {
    let stream = given_ahead(Delivery::Lossless).paced(std::time::Duration::from_millis(50));
    let read = events_read_before_the_other_task_ran(stream);
    assert!(
        read <= YIELDS_WITHIN,
        "the other task ran only after {read} events"
    );
}

#[giving::probe]
fn count_up(n: u64) -> u64 {
    let mut i = 0;
    while i < n {
        i += 1;
    }
    i
}

#[test]
fn a_probe_stream_behind_lets_the_other_tasks_run() {
    let gv = given();
    let probe = gv.probe("count_up > i").unwrap();
    count_up(GIVEN);
    gv.finish().unwrap();
    let read = events_read_before_the_other_task_ran(probe);
    assert!(
        read <= YIELDS_WITHIN,
        "the other task ran only after {read} events"
    );
}
