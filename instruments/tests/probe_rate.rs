//! The voir example in spirit: the rate instrument computes items/s from a probe alone, on a
//! loop that has no `give!` and no `iterate`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use giving::prelude::*;
use giving::vocab::{RateEvent, keys};
use giving_instruments::{Overseer, Probes, Rate};

/// A training loop that knows nothing about giving: no `give!`, no `iterate`.
#[giving::probe]
fn train_epoch(data: &[Vec<f32>]) -> f32 {
    let mut total = 0.0;
    for (i, batch) in data.iter().enumerate() {
        let n = batch.len();
        total += batch.iter().sum::<f32>() / n as f32;
        std::thread::sleep(Duration::from_micros(200));
        std::hint::black_box((i, total));
    }
    total
}

#[test]
fn rate_from_a_probe_alone() {
    let data: Vec<Vec<f32>> = (0..100).map(|i| vec![i as f32; 32]).collect();
    let rates = Arc::new(Mutex::new(Vec::new()));
    let steps = Arc::new(Mutex::new(0u64));
    let (rate_sink, step_sink) = (rates.clone(), steps.clone());
    let run = Overseer::new()
        // milabench's probe: `step` and `batch` at the end of each iteration.
        .with(Probes::new(["train_epoch(i as step, n as batch, !#endloop_i as done)"]).unwrap())
        .with(Rate::new().skip(0))
        .instrument_fn("sink", move |start| {
            let (rate_sink, step_sink) = (rate_sink.clone(), step_sink.clone());
            let events = start.given().stream();
            start.spawn(events.for_each(move |event| {
                if let Some(rate) = RateEvent::of(&event) {
                    rate_sink
                        .lock()
                        .unwrap()
                        .push((rate.rate, rate.units.to_owned()));
                } else if event.has(keys::PROBE) {
                    *step_sink.lock().unwrap() += 1;
                }
            }));
            Ok(())
        })
        .run(|| train_epoch(&data));
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(
        *steps.lock().unwrap(),
        100,
        "every probed step reached the sink"
    );
    let rates = rates.lock().unwrap();
    // The first step opens the first window; a window closes every 10 steps.
    assert_eq!(rates.len(), 9, "{rates:?}");
    for (rate, units) in rates.iter() {
        assert_eq!(units, "items/s");
        assert!(*rate > 0.0);
    }
}

#[test]
fn a_bad_selector_is_refused_before_training() {
    let error = Probes::new(["train_epoch > totl"]).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("`train_epoch` has no variable `totl` (column 15)"),
        "{error}"
    );
    let error = Probes::new(["train_epoch >"]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "selector `train_epoch >`, column 14: expected a variable or function name, found the end"
    );
}
