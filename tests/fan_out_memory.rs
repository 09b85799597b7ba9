//! Memory of a scope over tens of millions of events with a bounded subscriber that never
//! reads. In a file of its own: the resident memory it samples is the whole process's, which
//! other tests running beside it would grow.

use giving::{Delivery, give, given};

/// Resident memory of this process, in bytes (Linux).
fn rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn memory_stays_flat_with_a_bounded_subscriber_that_never_reads() {
    if rss().is_none() {
        println!("SKIPPED: no /proc/self/statm to read the resident memory from");
        return;
    }
    // A leak of one byte per event would grow 19 MB past the baseline, over the bound.
    const EVENTS: u64 = 20_000_000;
    let gv = given();
    let never_read = gv.stream_with(Delivery::Bounded(1024));
    let lag = never_read.lag();
    let mut baseline = 0;
    for i in 0..EVENTS {
        give!(i);
        if i == 1_000_000 {
            baseline = rss().unwrap();
        }
    }
    let grown = rss().unwrap().saturating_sub(baseline);
    assert_eq!(lag.dropped(), EVENTS - 1024);
    assert!(
        grown < 16 << 20,
        "resident memory grew by {} MB over {EVENTS} events",
        grown >> 20
    );
    drop(never_read);
    gv.finish().unwrap();
}
