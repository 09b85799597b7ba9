//! Rate: milabench's method on injected timestamps, so the expected rate is exact.

use std::time::Duration;

use giving::prelude::*;
use giving::{Event, Timestamp};
use giving_instruments::{Overseer, Rate, RateMeter};

const T0: u64 = 1_700_000_000_000_000_000;

/// The events `iterate` gives for `steps` steps of `step_time` each, batch `batch`, a sync
/// every `window` steps — with injected timestamps.
fn iterate_events(
    task: &str,
    steps: u64,
    step_time: Duration,
    batch: u64,
    window: u64,
) -> Vec<Event> {
    let t0 = Timestamp::from_nanos(T0);
    let mut events = vec![
        Event::builder()
            .field("task", task)
            .field("progress", (0u64, steps))
            .time(t0)
            .build(),
    ];
    for step in 0..steps {
        let done = step + 1;
        let mut builder = Event::builder()
            .field("task", task)
            .field("step", step)
            .field("batch", batch)
            .field("progress", (done, steps));
        if done % window == 0 || done == steps {
            builder = builder.field("synced", true);
        }
        events.push(builder.time(t0.plus(step_time * done as u32)).build());
    }
    events
}

#[test]
fn known_step_time_and_batch_give_the_theoretical_rate() {
    // 12.5 ms per step, batch 64: 5120 items/s.
    let events = iterate_events("train", 200, Duration::from_micros(12_500), 64, 10);
    let mut meter = RateMeter::new(5);
    let rates: Vec<Event> = events.iter().filter_map(|e| meter.observe(e)).collect();
    assert_eq!(rates.len(), 20 - 5, "20 windows, 5 skipped as warm-up");
    for rate in &rates {
        let value = rate.get_as::<f64>("rate").unwrap();
        assert!((value / 5120.0 - 1.0).abs() < 0.005, "rate {value}");
        assert_eq!(rate.get_as::<String>("units").unwrap(), "items/s");
        assert_eq!(rate.get_as::<String>("task").unwrap(), "train");
    }
}

#[test]
fn device_time_queued_in_a_window_is_counted_at_its_sync() {
    // Host steps are fast (1 ms) except the synced one, which waits for the device (91 ms):
    // each window of 10 steps takes 100 ms for 10 × 32 items, whatever the host saw per step.
    let t0 = Timestamp::from_nanos(T0);
    let mut events = vec![
        Event::builder()
            .field("task", "t")
            .field("progress", (0u64, 40u64))
            .time(t0)
            .build(),
    ];
    let mut now = t0;
    for step in 0..40u64 {
        let synced = (step + 1) % 10 == 0;
        now = now.plus(Duration::from_millis(if synced { 91 } else { 1 }));
        let mut b = Event::builder()
            .field("task", "t")
            .field("step", step)
            .field("batch", 32u64);
        if synced {
            b = b.field("synced", true);
        }
        events.push(b.time(now).build());
    }
    let mut meter = RateMeter::new(0);
    let rates: Vec<f64> = events
        .iter()
        .filter_map(|e| meter.observe(e))
        .map(|e| e.get_as::<f64>("rate").unwrap())
        .collect();
    assert_eq!(rates.len(), 4);
    for rate in rates {
        assert!((rate / 3200.0 - 1.0).abs() < 0.005, "{rate}");
    }
}

#[test]
fn tasks_are_measured_separately_and_epochs_restart_the_window() {
    let mut meter = RateMeter::new(0);
    let mut rates = Vec::new();
    for (task, ms, batch) in [("train", 10u64, 16u64), ("valid", 5, 8), ("train", 10, 16)] {
        let mut events = iterate_events(task, 20, Duration::from_millis(ms), batch, 10);
        // Each epoch starts later (iterator set-up time is not counted).
        let shift = Duration::from_secs(rates.len() as u64 * 100);
        events = events
            .into_iter()
            .map(|e| e.to_builder().time(e.time().plus(shift)).build())
            .collect();
        rates.extend(events.iter().filter_map(|e| meter.observe(e)));
    }
    let by_task = |task: &str| -> Vec<f64> {
        rates
            .iter()
            .filter(|e| e.get_as::<String>("task").unwrap() == task)
            .map(|e| e.get_as::<f64>("rate").unwrap())
            .collect()
    };
    assert_eq!(by_task("train"), vec![1600.0; 4]);
    assert_eq!(by_task("valid"), vec![1600.0; 2]);
}

#[test]
fn loops_without_sync_markers_get_windows_by_step_count() {
    let mut meter = RateMeter::new(0).unsynced_window(5);
    let t0 = Timestamp::from_nanos(T0);
    let rates: Vec<f64> = (0..=20u64)
        .map(|i| {
            Event::builder()
                .field("step", i)
                .field("batch", 10u64)
                .time(t0.plus(Duration::from_millis(20 * i)))
                .build()
        })
        .filter_map(|e| meter.observe(&e))
        .map(|e| e.get_as::<f64>("rate").unwrap())
        .collect();
    assert_eq!(rates, vec![500.0; 4]);
}

#[test]
fn the_rate_instrument_gives_rates_into_the_scope() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let run = Overseer::new()
        .instrument_fn("sink", move |start| {
            let sink = sink.clone();
            let rates = start.given().stream().where_(["rate"]);
            start.spawn(rates.for_each(move |e| sink.lock().unwrap().push(e)));
            Ok(())
        })
        .with(Rate::new().skip(1))
        .run(|| {
            let giver = giving::Giver::current();
            for event in iterate_events("train", 50, Duration::from_millis(20), 32, 10) {
                giver.give(event);
            }
        });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let rates = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(rates.len(), 4);
    for rate in rates {
        assert_eq!(rate.get_as::<f64>("rate").unwrap(), 1600.0);
    }
}
