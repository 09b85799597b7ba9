//! Derived events: a pipeline that reads a scope's events and gives new ones into the same
//! scope; its last outputs reach every sink at `finish`.

use giving::prelude::*;
use giving::{Event, Given, give, given, iterate};

fn count_of(event: &Event) -> u64 {
    event.get_as::<u64>("count").unwrap()
}

#[test]
fn the_last_output_of_a_derivation_reaches_a_sink_subscribed_before_it() {
    let gv = given();
    let sink = gv.spawn(gv.stream().where_(["count"]).collect::<Vec<_>>());
    // Gives one event at the very end: when the loop's events complete.
    let _derived = gv.derive(|events, giver| async move {
        let n = events.where_(["x"]).count().await;
        giver.give(giving::event!(count = n));
    });
    for x in 0..100u64 {
        give!(x);
    }
    gv.finish().unwrap();
    let counts: Vec<u64> = sink.join().unwrap().iter().map(count_of).collect();
    assert_eq!(counts, vec![100]);
}

#[test]
fn a_derivation_sees_the_final_outputs_of_the_derivations_made_before_it() {
    let gv = given();
    let sink = gv.spawn(gv.stream().where_(["total"]).collect::<Vec<_>>());
    let _derived = gv.derive(|events, giver| async move {
        let n = events.where_(["x"]).count().await;
        giver.give(giving::event!(count = n));
    });
    let _derived = gv.derive(|events, giver| async move {
        let counts: Vec<u64> = events.key::<u64>("count").collect().await;
        giver.give(giving::event!(total = counts.iter().sum::<u64>() + 1000));
    });
    for x in 0..7u64 {
        give!(x);
    }
    gv.finish().unwrap();
    let totals: Vec<u64> = sink
        .join()
        .unwrap()
        .iter()
        .map(|e| e.get_as::<u64>("total").unwrap())
        .collect();
    assert_eq!(totals, vec![1007]);
}

#[test]
fn a_derivation_does_not_receive_its_own_outputs() {
    let gv = given();
    let everything = gv.spawn(gv.stream().count());
    // Gives one event per event it reads: with its own outputs fed back, it would never end.
    let seen = gv.derive(|events, giver| async move {
        events
            .fold(0u64, move |n, _event| {
                giver.give(giving::event!(echo = n));
                n + 1
            })
            .await
    });
    for x in 0..50u64 {
        give!(x);
    }
    gv.finish().unwrap();
    assert_eq!(seen.join().unwrap(), 50);
    assert_eq!(everything.join().unwrap(), 100); // 50 given + 50 echoes
}

#[test]
fn derived_events_of_a_global_scope_arrive_once() {
    let gv = Given::global();
    let echoes = gv.spawn(gv.stream().where_(["global_echo"]).count());
    let _derived = gv.derive(|events, giver| async move {
        let n = events.where_(["global_x"]).count().await;
        giver.give(giving::event!(global_echo = n));
    });
    std::thread::spawn(|| give!(global_x = 1)).join().unwrap();
    gv.finish().unwrap();
    assert_eq!(echoes.join().unwrap(), 1);
}

#[test]
fn derived_rates_from_iterate_reach_the_sink_with_every_step() {
    let gv = given();
    let synced = gv.spawn(gv.stream().where_(["windows"]).collect::<Vec<_>>());
    let _derived = gv.derive(|events, giver| async move {
        let windows = events.where_(["synced"]).count().await;
        giver.give(giving::event!(windows));
    });
    for _ in iterate("train", 0..25).window(10) {}
    gv.finish().unwrap();
    let windows = synced.join().unwrap();
    assert_eq!(windows.len(), 1);
    assert_eq!(windows[0].get_as::<u64>("windows").unwrap(), 3); // 10, 20, 25
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finish_async_drains_derivations_too() {
    let gv = given();
    let sink = gv.spawn(gv.stream().where_(["count"]).collect::<Vec<_>>());
    let _derived = gv.derive(|events, giver| async move {
        let n = events.where_(["x"]).count().await;
        giver.give(giving::event!(count = n));
    });
    for x in 0..10u64 {
        give!(x);
    }
    gv.finish_async().await.unwrap();
    let counts: Vec<u64> = sink.await.unwrap().iter().map(count_of).collect();
    assert_eq!(counts, vec![10]);
}
