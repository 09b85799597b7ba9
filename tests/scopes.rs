//! Which scopes receive which events: nesting, threads, carrying, completion.

use giving::prelude::*;
use giving::{Event, give, given};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    futures::executor::block_on(future)
}

fn keys_of(events: Vec<Event>, key: &str) -> Vec<i64> {
    events
        .iter()
        .filter_map(|e| e.get_as::<i64>(key).ok())
        .collect()
}

#[test]
fn nested_scopes_both_receive_and_inner_ends_first() {
    let outer = given();
    let outer_events = outer.stream();
    give!(x = 1);
    let inner = given();
    let inner_events = inner.stream();
    give!(x = 2);
    inner.finish().unwrap();
    give!(x = 3);
    outer.finish().unwrap();

    assert_eq!(
        keys_of(block_on(outer_events.collect()), "x"),
        vec![1, 2, 3]
    );
    assert_eq!(keys_of(block_on(inner_events.collect()), "x"), vec![2]);
}

#[test]
fn dropping_a_scope_ends_its_streams() {
    let gv = given();
    let events = gv.stream();
    give!(x = 1);
    drop(gv);
    give!(x = 2);
    assert_eq!(keys_of(block_on(events.collect()), "x"), vec![1]);
}

#[test]
fn a_thread_scope_does_not_see_other_threads_unless_carried() {
    let gv = given();
    let events = gv.stream();
    std::thread::spawn(|| give!(x = 1)).join().unwrap();
    let handle = gv.handle();
    std::thread::spawn(move || {
        let _inside = handle.enter();
        give!(x = 2);
    })
    .join()
    .unwrap();
    give!(x = 3);
    gv.finish().unwrap();
    assert_eq!(keys_of(block_on(events.collect()), "x"), vec![2, 3]);
}

#[test]
fn a_scope_carried_into_a_tokio_task_receives_from_any_worker() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let gv = given();
    let events = gv.stream();
    let handle = gv.handle();
    runtime.block_on(async move {
        let task = tokio::spawn(handle.wrap(async {
            for i in 0..10 {
                give!(i);
                tokio::task::yield_now().await;
            }
        }));
        task.await.unwrap();
    });
    gv.finish().unwrap();
    assert_eq!(
        keys_of(block_on(events.collect()), "i"),
        (0..10).collect::<Vec<_>>()
    );
}

#[test]
fn the_subscription_starts_at_the_call_not_at_the_first_poll() {
    let gv = given();
    give!(x = 0); // before: not received
    let events = gv.stream();
    give!(x = 1);
    gv.finish().unwrap();
    assert_eq!(keys_of(block_on(events.collect()), "x"), vec![1]);
}

#[test]
fn completion_makes_a_reduction_emit() {
    let gv = given();
    let best = gv.spawn(futures::StreamExt::fold(
        gv.stream().key::<f64>("loss"),
        f64::INFINITY,
        |best, loss| futures::future::ready(best.min(loss)),
    ));
    for loss in [0.9, 0.3, 0.5] {
        give!(loss);
    }
    gv.finish().unwrap();
    assert_eq!(best.join().unwrap(), 0.3);
}

#[test]
fn events_given_after_the_end_are_not_delivered() {
    let gv = given();
    let handle_events = gv.stream();
    let giver = gv.giver();
    drop(gv);
    giver.give(giving::event!(x = 1));
    assert!(block_on(handle_events.collect::<Vec<_>>()).is_empty());
}

#[test]
fn a_stop_token_ends_iterate_between_steps() {
    let gv = given();
    let stop = gv.stop_token();
    let mut seen = Vec::new();
    for i in giving::iterate("train", 0..100) {
        seen.push(i);
        if i == 4 {
            stop.stop();
        }
    }
    gv.finish().unwrap();
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
}

#[test]
fn a_panic_in_the_loop_does_not_call_the_sync_hook_while_unwinding() {
    let gv = given();
    let steps = gv.spawn(gv.stream().where_(["step"]).count());
    let outcome = std::panic::catch_unwind(|| {
        let sync = || panic!("the device is gone");
        for step in giving::iterate("train", 0..100).window(1000).sync(sync) {
            if step == 3 {
                panic!("diverged");
            }
        }
    });
    // Without the guard, the sync hook's panic during unwinding aborts the whole process.
    let panic = outcome.unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"diverged"));
    gv.finish().unwrap();
    assert_eq!(
        steps.join().unwrap(),
        4,
        "the step in progress is still given"
    );
}
