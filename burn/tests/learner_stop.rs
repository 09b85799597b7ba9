//! A giving stop (a scope's stop token, as the dashboard's `q`, Ctrl-C through the Overseer
//! and `EarlyStop` stop it) ends a burn-train `Learner` cleanly. Its own test process: it
//! reads the process-wide step counter of the support model.

mod support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use giving::Giver;
use giving::vocab::keys;
use giving_burn::train::{GivingLogger, GivingRenderer, StopBridge};
use giving_instruments::Overseer;
use giving_instruments::log::{LogReader, MsgpackLog};
use support::{STEP_MILLIS, TRAIN_STEPS};

#[test]
fn a_giving_stop_ends_the_learner_within_one_iteration_and_the_log_ends() {
    let dir = tempfile::tempdir().unwrap();
    let burn_dir = dir.path().join("burn");
    let log = MsgpackLog::in_dir(dir.path().join("log")).unwrap();
    let path = log.path().to_path_buf();
    // 20 ms a step: the bridge looks every millisecond, well within one.
    STEP_MILLIS.store(20, Ordering::Relaxed);
    let run = Overseer::new().ctrl_c(false).quiet(true).with(log).run(|| {
        // 100 iterations planned per epoch, three epochs.
        let (training, learner) = support::training(&burn_dir, 3, 400);
        let _bridge = StopBridge::current(training.interrupter()).unwrap();
        // What `q` does: stop the run's scope, here once three steps have started.
        let tokens = Giver::current().stop_tokens();
        let stopper = std::thread::spawn(move || {
            while TRAIN_STEPS.load(Ordering::SeqCst) < 3 {
                std::thread::sleep(Duration::from_millis(1));
            }
            let at = TRAIN_STEPS.load(Ordering::SeqCst);
            tokens.iter().for_each(giving::StopToken::stop);
            at
        });
        let _model = training
            .with_metric_logger(GivingLogger::new())
            .renderer(GivingRenderer::new())
            .launch(learner)
            .model;
        stopper.join().unwrap()
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert!(run.stopped);
    // The Learner returned normally.
    let stopped_at = *run.output.as_ref().unwrap();
    let steps = TRAIN_STEPS.load(Ordering::SeqCst);
    assert!(
        steps <= stopped_at + 1,
        "stopped during step {stopped_at}, {steps} steps taken"
    );

    let mut reader = LogReader::open(&path).unwrap();
    let events: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
    let end = reader.end().expect("the log has its end record");
    assert_eq!(end.events, events.len() as u64);
    // Every step taken was logged, and nothing was validated after the stop.
    let losses = events.iter().filter(|e| e.has(keys::LOSS)).count() as u64;
    assert_eq!(losses, steps);
    assert!(!events.iter().any(|e| e.has(keys::VAL_LOSS)));
}
