//! The Overseer: phases, failure isolation, early stop, flushing at finish and on a panic.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use giving::prelude::*;
use giving::{give, iterate};
use giving_instruments::log::LogReader;
use giving_instruments::{
    EarlyStop, Instrument, InstrumentError, MsgpackLog, Overseer, Phase, Rate, Start,
};

/// Records the phases it goes through; fails where told to.
struct Probe {
    phases: Arc<Mutex<Vec<&'static str>>>,
    fail_at: Option<Phase>,
}

impl Instrument for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        self.phases.lock().unwrap().push("start");
        match self.fail_at {
            Some(Phase::Start) => Err(InstrumentError::other("no can do")),
            Some(Phase::Run) => {
                let steps = start.given().stream().where_(["step"]);
                start.spawn(steps.for_each(|_| panic!("pipeline broke")));
                Ok(())
            }
            _ => Ok(()),
        }
    }
    fn finish(&mut self) -> Result<(), InstrumentError> {
        self.phases.lock().unwrap().push("finish");
        if self.fail_at == Some(Phase::Finish) {
            panic!("finish broke");
        }
        Ok(())
    }
}

fn train(steps: usize) -> usize {
    let mut n = 0;
    for _ in iterate("train", 0..steps).batch_size(4) {
        n += 1;
    }
    n
}

#[test]
fn phases_run_in_order() {
    let phases = Arc::new(Mutex::new(Vec::new()));
    let probe = Probe {
        phases: phases.clone(),
        fail_at: None,
    };
    let run = Overseer::new().with(probe).run(|| {
        phases.lock().unwrap().push("run");
        7
    });
    assert_eq!(run.output, Ok(7));
    assert!(run.problems.is_empty());
    assert_eq!(*phases.lock().unwrap(), ["start", "run", "finish"]);
}

#[test]
fn failing_instruments_are_reported_and_training_goes_on() {
    for phase in [Phase::Start, Phase::Run, Phase::Finish] {
        let phases = Arc::new(Mutex::new(Vec::new()));
        let probe = Probe {
            phases: phases.clone(),
            fail_at: Some(phase),
        };
        let run = Overseer::new().with(probe).quiet(true).run(|| train(50));
        assert_eq!(run.output, Ok(50), "{phase}: training completes");
        assert_eq!(run.exit_code(), 1, "a failed instrument is not a success");
        assert_eq!(run.problems.len(), 1, "{phase}: {:?}", run.problems);
        let problem = &run.problems[0];
        assert_eq!(problem.instrument, "probe");
        assert_eq!(problem.phase, phase);
        let message = problem.to_string();
        assert!(
            message.starts_with("instrument `probe` failed during"),
            "{message}"
        );
        // What failed is kept typed, not only as text.
        match phase {
            Phase::Start => {
                let error = problem.error.as_deref().expect("the start error is kept");
                let error = error
                    .downcast_ref::<InstrumentError>()
                    .expect("an InstrumentError");
                assert!(matches!(error, InstrumentError::Other(_)), "{error:?}");
                assert_eq!(error.to_string(), "no can do");
                let source = std::error::Error::source(problem).expect("source is the error");
                assert_eq!(source.to_string(), "no can do");
                assert!(problem.panic.is_none());
            }
            Phase::Run => {
                let error = problem
                    .error
                    .as_deref()
                    .expect("the pipeline error is kept");
                let error = error
                    .downcast_ref::<giving::PipelineError>()
                    .expect("a PipelineError");
                assert!(
                    matches!(error, giving::PipelineError::Panicked { message, .. } if message == "pipeline broke"),
                    "{error:?}"
                );
            }
            _ => {
                let panic = problem.panic.as_ref().expect("the panic is kept");
                assert_eq!(panic.message(), "finish broke");
                let source = std::error::Error::source(problem).expect("source is the panic");
                assert_eq!(source.to_string(), "finish broke");
                let payload = panic.take().expect("with its payload");
                assert_eq!(payload.downcast_ref::<&str>(), Some(&"finish broke"));
                assert!(problem.error.is_none());
            }
        }
        let finished = phases.lock().unwrap().contains(&"finish");
        assert_eq!(
            finished,
            phase != Phase::Start,
            "a failed start switches it off"
        );
    }
}

#[test]
fn early_stop_ends_the_loop_cleanly_and_the_log_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let run = Overseer::new()
        .with(Rate::new().skip(2))
        .with(EarlyStop::new(4))
        .with(MsgpackLog::create(&path).unwrap())
        .run(|| {
            let mut steps = 0u64;
            for _ in iterate("train", 0..).batch_size(8).window(5) {
                steps += 1;
                give!(loss = 1.0 / steps as f64);
                std::thread::yield_now();
            }
            steps
        });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert!(run.stopped);
    assert_eq!(run.exit_code(), 0);
    let steps = run.output.unwrap();
    assert!(
        steps >= 30,
        "2 warm-up windows + 4 measured, of 5 steps: {steps}"
    );

    let events: Vec<_> = LogReader::open(&path)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let count = |key: &str| events.iter().filter(|e| e.has(key)).count() as u64;
    assert_eq!(count("loss"), steps, "every loss reached the log");
    assert!(
        count("rate") >= 4,
        "rates given into the run's scope are logged"
    );
    let progress: Vec<Vec<u64>> = events
        .iter()
        .filter(|e| e.get_as::<String>("task").is_ok_and(|t| t == "early_stop"))
        .map(|e| e.get_as::<Vec<u64>>("progress").unwrap())
        .collect();
    assert_eq!(progress, [vec![1, 4], vec![2, 4], vec![3, 4], vec![4, 4]]);
}

#[test]
fn a_panic_in_the_loop_is_caught_and_the_log_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let run = Overseer::new()
        .with(MsgpackLog::create(&path).unwrap())
        .run(|| {
            for step in 0..100u64 {
                give!(step);
                if step == 41 {
                    panic!("diverged at step {step}");
                }
            }
        });
    let panic = run.output.as_ref().expect_err("training panicked");
    assert_eq!(panic.message(), "diverged at step 41");
    let payload = panic.take().expect("the panic's payload is kept");
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("diverged at step 41"),
        "re-raisable as it was raised"
    );
    assert_eq!(run.exit_code(), 101);
    let events: Vec<_> = LogReader::open(&path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let steps: Vec<u64> = events
        .iter()
        .filter_map(|e| e.get_as::<u64>("step").ok())
        .collect();
    assert_eq!(
        steps,
        (0..42).collect::<Vec<_>>(),
        "closed cleanly, with every step"
    );
    // The panic itself is the last event: sinks (the MLflow run's status) learn of it.
    let last = events.last().unwrap();
    assert_eq!(last.get_as::<String>("instrument").unwrap(), "training");
    assert_eq!(
        last.get_as::<String>("problem").unwrap(),
        "training panicked: diverged at step 41"
    );
    assert_eq!(events.len(), 43);
}

#[test]
fn function_instruments_see_the_events_of_the_loop() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let run = Overseer::new()
        .instrument_fn("count", move |start| {
            let counter = counter.clone();
            let steps = start.given().stream().where_(["step"]);
            start.spawn(steps.for_each(move |_| {
                counter.fetch_add(1, Ordering::Relaxed);
            }));
            Ok(())
        })
        .run(|| train(25));
    assert_eq!(run.output, Ok(25));
    assert_eq!(seen.load(Ordering::Relaxed), 25);
}

#[test]
fn the_last_rate_and_the_last_early_stop_progress_reach_the_log_at_finish() {
    // The loop's last step closes the last rate window after training returned; that rate is
    // early stop's last count. Both are given after the loop's scope would have ended: the
    // log, started first, must still receive them, every time.
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.msgpack");
        let run = Overseer::new()
            .with(MsgpackLog::create(&path).unwrap())
            .with(Rate::new().skip(0))
            .with(EarlyStop::new(10))
            .run(|| train_windows(50, 5));
        assert!(run.problems.is_empty(), "{:?}", run.problems);
        let events: Vec<_> = LogReader::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let rates = events.iter().filter(|e| e.has("rate")).count();
        assert_eq!(rates, 10, "round {round}: one rate per window of 5 steps");
        let progress: Vec<Vec<u64>> = events
            .iter()
            .filter(|e| e.get_as::<String>("task").is_ok_and(|t| t == "early_stop"))
            .map(|e| e.get_as::<Vec<u64>>("progress").unwrap())
            .collect();
        assert_eq!(progress.len(), 10, "round {round}: {progress:?}");
        assert_eq!(progress.last().unwrap(), &vec![10, 10], "round {round}");
    }
}

fn train_windows(steps: usize, window: usize) -> usize {
    let mut n = 0;
    for _ in iterate("train", 0..steps).batch_size(4).window(window) {
        n += 1;
    }
    n
}

#[test]
fn a_sink_failing_mid_run_is_reported_at_once_and_as_an_event() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let reported = Arc::new(AtomicUsize::new(0));
    let flag = reported.clone();
    let run = Overseer::new()
        .quiet(true)
        .instrument_fn("problems", move |start| {
            let sink = sink.clone();
            let problems = start.given().stream().where_(["problem"]);
            start.spawn(problems.for_each(move |e| sink.lock().unwrap().push(e)));
            Ok(())
        })
        .instrument_fn("disk", move |start| {
            let reporter = start.reporter();
            let flag = flag.clone();
            let steps = start.given().stream().where_(["step"]);
            start.spawn(steps.for_each(move |event| {
                if event.get_as::<u64>("step").unwrap() == 10 {
                    // A sink's disk fills up: it says so now, twice, and goes on.
                    reporter.report(&"No space left on device (os error 28)");
                    reporter.report(&"No space left on device (os error 28)");
                    flag.store(1, Ordering::SeqCst);
                }
            }));
            Ok(())
        })
        .run(move || {
            // Training goes on while the sink fails, and past it.
            let mut steps = 0;
            for _ in iterate("train", 0..100_000) {
                steps += 1;
                if steps > 20 && reported.load(Ordering::SeqCst) == 1 {
                    break;
                }
                std::thread::yield_now();
            }
            steps
        });
    assert!(*run.output.as_ref().unwrap() > 20, "training went on");
    assert_eq!(run.exit_code(), 1);
    assert_eq!(run.problems.len(), 1, "reported once: {:?}", run.problems);
    assert_eq!(run.problems[0].instrument, "disk");
    assert!(run.problems[0].message.contains("No space left"));
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.len(),
        1,
        "one problem event, given while the run went on"
    );
    assert_eq!(seen[0].get_as::<String>("instrument").unwrap(), "disk");
}

#[test]
fn a_panic_with_a_typed_payload_keeps_it() {
    #[derive(Debug, PartialEq)]
    struct Diverged {
        step: u64,
    }
    let run = Overseer::new()
        .quiet(true)
        .run(|| std::panic::panic_any(Diverged { step: 7 }));
    let panic = run.output.as_ref().expect_err("training panicked");
    assert_eq!(panic.message(), "(no message)");
    assert_eq!(run.exit_code(), 101);
    let payload = panic.take().expect("the payload is kept");
    assert_eq!(
        payload.downcast_ref::<Diverged>(),
        Some(&Diverged { step: 7 })
    );
    assert!(panic.take().is_none(), "taken once");
}
