//! Spawning pipelines from sync and async code; finish waits and reports failures.

use giving::prelude::*;
use giving::{FinishError, PipelineError, give, given};

#[test]
fn pipelines_spawned_from_sync_code_run_in_the_background() {
    let gv = given();
    let sum = gv.spawn(futures::StreamExt::fold(
        gv.stream().key::<u64>("x"),
        0,
        |acc, x| futures::future::ready(acc + x),
    ));
    let seen = gv.spawn(gv.stream().collect::<Vec<_>>());
    for x in 1..=100u64 {
        give!(x);
    }
    gv.finish().unwrap();
    assert_eq!(sum.join().unwrap(), 5050);
    assert_eq!(seen.join().unwrap().len(), 100);
}

#[test]
fn a_panicking_pipeline_is_reported_and_does_not_stop_the_others() {
    let gv = given();
    let bad = gv.spawn(async {
        panic!("sink exploded");
    });
    let good = gv.spawn(gv.stream().key::<u64>("x").collect::<Vec<_>>());
    for x in 0..3u64 {
        give!(x);
    }
    let error = gv.finish().unwrap_err();
    assert_eq!(
        error,
        FinishError::Failed(vec![PipelineError::Panicked {
            index: 0,
            message: "sink exploded".to_owned()
        }])
    );
    assert!(bad.join().is_err());
    assert_eq!(good.join().unwrap(), vec![0, 1, 2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelines_run_on_the_current_runtime_and_finish_async_waits() {
    let gv = given();
    let count = gv.spawn(gv.stream().collect::<Vec<_>>());
    for x in 0..10 {
        give!(x);
    }
    gv.finish_async().await.unwrap();
    assert_eq!(count.await.unwrap().len(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_finish_inside_a_multi_thread_runtime_works() {
    let gv = given();
    let count = gv.spawn(gv.stream().collect::<Vec<_>>());
    give!(x = 1);
    gv.finish().unwrap();
    assert_eq!(count.await.unwrap().len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn sync_finish_on_a_current_thread_runtime_refuses_to_deadlock() {
    let gv = given();
    let pipeline = gv.spawn(gv.stream().collect::<Vec<_>>());
    assert_eq!(gv.finish().unwrap_err(), FinishError::WouldDeadlock);
    // The scope has ended all the same, so the pipeline completes.
    assert!(pipeline.await.unwrap().is_empty());
}

#[test]
fn a_failed_check_is_reported_by_finish_with_the_event_that_failed_it() {
    let gv = given();
    let _healthy = gv.check(gv.stream().where_(["loss"]).fail_if_empty("no loss given"));
    let _finite = gv.check(gv.stream().where_(["loss"]).fail_if(
        |e| !e.get_as::<f64>("loss").unwrap().is_finite(),
        "loss diverged",
    ));
    let _rates = gv.check(gv.stream().where_(["rate"]).fail_if_empty("no rate"));
    for (step, loss) in [(0u64, 0.5), (1, f64::INFINITY), (2, 0.25)] {
        give!(step, loss);
    }
    let Err(FinishError::Failed(failures)) = gv.finish() else {
        panic!("the failed checks were not reported");
    };
    let messages: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert_eq!(failures.len(), 2, "{messages:?}");
    assert!(
        failures.iter().any(|f| matches!(f, PipelineError::CheckFailed { index: 1, message }
            if message.starts_with("loss diverged:") && message.contains("step") && message.contains("inf"))),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m == "check #2 failed: no rate (no item)"),
        "{messages:?}"
    );
}
