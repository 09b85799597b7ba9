//! Global scopes receive every thread's events. Tests in this binary run in parallel and share
//! the global scopes, so each one filters on keys of its own.

use giving::prelude::*;
use giving::{Given, give, given};

#[test]
fn a_global_scope_receives_every_thread() {
    let gv = Given::global();
    let events = gv.stream().key::<i64>("global_thread_probe");
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            std::thread::spawn(move || {
                for i in 0..100i64 {
                    let global_thread_probe = worker * 1000 + i;
                    give!(global_thread_probe);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    gv.finish().unwrap();
    let mut seen: Vec<i64> = futures::executor::block_on(events.collect());
    assert_eq!(seen.len(), 400);
    // Each producer's own order is kept.
    for worker in 0..4 {
        let mine: Vec<i64> = seen
            .iter()
            .copied()
            .filter(|v| v / 1000 == worker)
            .collect();
        assert_eq!(
            mine,
            (0..100).map(|i| worker * 1000 + i).collect::<Vec<_>>()
        );
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 400);
}

#[test]
fn global_and_thread_scopes_both_receive_once() {
    let global = Given::global();
    let global_events = global.stream().key::<i64>("global_nested_probe");
    let local = given();
    let local_events = local.stream().key::<i64>("global_nested_probe");
    let global_nested_probe = 5;
    give!(global_nested_probe);
    local.finish().unwrap();
    global.finish().unwrap();
    assert_eq!(
        futures::executor::block_on(global_events.collect::<Vec<_>>()),
        vec![5]
    );
    assert_eq!(
        futures::executor::block_on(local_events.collect::<Vec<_>>()),
        vec![5]
    );
}
