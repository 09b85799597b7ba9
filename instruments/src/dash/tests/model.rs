//! What the state makes of events: progress, rates, keys, charts, the whole run.

use super::*;

/// What was `DashState`'s doc example while it was public.
#[test]
fn one_event_at_a_time() {
    let mut state = DashState::new(["acc"]);
    let t = Timestamp::from_nanos(1_000_000_000);
    let start = [
        ("task", Value::from("train")),
        ("progress", Value::from((0, 10))),
    ];
    state.observe(&Event::new_at(start, t));
    let step = [("global_step", Value::from(0)), ("loss", Value::from(0.5))];
    state.observe(&Event::new_at(step, t));
    assert_eq!(state.key("loss").unwrap().count, 1);
    assert_eq!(state.series("loss").unwrap().points, [(0.0, 0.5)]);
    assert_eq!(state.tasks()[0].progress, Some((0, 10)));
    assert_eq!(state.plots(), ["loss", "acc"]);
}

#[test]
fn state_aggregates_progress_rates_keys_and_series() {
    let mut state = DashState::new(["lr"]);
    script(&mut state, 200, 100);
    let task = &state.tasks()[0];
    assert_eq!(task.name, "train");
    assert_eq!(task.progress, Some((100, 200)));
    assert_eq!(task.ratio(), 0.5);
    // 100 steps in 1 s: 100 left take 1 s more.
    assert_eq!(task.eta(), Some(Duration::from_secs(1)));
    assert_eq!(task.rate, Some(3099.0));
    assert_eq!(task.mean_rate(), Some(3054.0)); // the mean of 3009, 3019, …, 3099
    assert_eq!(task.units.as_deref(), Some("items/s"));
    assert_eq!(state.key("loss").unwrap().count, 100);
    assert_eq!(state.key("rate").unwrap().units.as_deref(), Some("items/s"));
    assert_eq!(state.key("task").unwrap().units, None);
    let loss = state.series("loss").unwrap();
    assert_eq!(loss.points.len(), 100);
    assert_eq!(loss.points[0], (0.0, 2.0));
    assert_eq!(loss.points[99], (99.0, 0.02));
    assert_eq!(state.series("lr").unwrap().points.len(), 100);
    assert_eq!(state.events(), 1 + 100 + 100 + 10);
}

#[test]
fn long_series_are_thinned_not_unbounded() {
    let mut state = DashState::new(Vec::<String>::new());
    for step in 0..100_000u64 {
        state.observe(&Event::new_at(
            [
                ("global_step", Value::from(step)),
                ("loss", Value::from(1.0)),
            ],
            at(step),
        ));
    }
    let points = &state.series("loss").unwrap().points;
    assert!(points.len() < 2048, "{}", points.len());
    assert_eq!(points[0].0, 0.0);
    assert!(points.last().unwrap().0 > 99_000.0);
}

#[test]
fn lazy_losses_are_read_sparingly() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reads = Arc::new(AtomicUsize::new(0));
    let mut state = DashState::new(Vec::<String>::new());
    for step in 0..1000u64 {
        let loss = Value::lazy(DeviceLoss(1.0 / (step as f64 + 1.0), reads.clone()));
        state.observe(&Event::new_at(
            [("global_step", Value::from(step)), ("loss", loss)],
            at(step), // 1 ms apart
        ));
    }
    // One read per 50 ms of event time: steps 0, 50, …, 950.
    assert_eq!(reads.load(Ordering::SeqCst), 20);
    let points = &state.series("loss").unwrap().points;
    assert_eq!(points.len(), 20);
    assert_eq!(points[1], (50.0, 1.0 / 51.0));
    assert_eq!(state.key("loss").unwrap().count, 1000);
    // The keys table and the plain line read the latest value only.
    assert!(plain_line(&state).contains("loss=0.001"));
    assert_eq!(reads.load(Ordering::SeqCst), 21);

    let reads = Arc::new(AtomicUsize::new(0));
    let mut state = DashState::new(Vec::<String>::new()).read_lazy_every(Duration::ZERO);
    for step in 0..100u64 {
        let loss = Value::lazy(DeviceLoss(0.5, reads.clone()));
        state.observe(&Event::new_at([("loss", loss)], at(step)));
    }
    assert_eq!(reads.load(Ordering::SeqCst), 100);
    assert_eq!(state.series("loss").unwrap().points[99], (99.0, 0.5));
}

#[test]
fn without_what_the_run_plans_there_is_no_run_progress() {
    let mut state = DashState::new(Vec::<String>::new());
    script(&mut state, 200, 100);
    assert_eq!(state.run().progress(), None);
    assert_eq!(state.run().eta(), None);
    assert!(!plain_line(&state).contains("| run"));
}
