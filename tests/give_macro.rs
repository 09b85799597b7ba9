//! `give!`: keys, evaluation only when listened to, origin; values and their errors.

use std::sync::atomic::{AtomicUsize, Ordering};

use giving::prelude::*;
use giving::{Event, Value, give, given};

fn collect(events: giving::EventStream) -> Vec<Event> {
    futures::executor::block_on(events.collect())
}

/// Each event as `key=value …`.
fn shown(events: &[Event]) -> Vec<String> {
    events.iter().map(ToString::to_string).collect()
}

static EVALUATED: AtomicUsize = AtomicUsize::new(0);

fn expensive() -> f64 {
    EVALUATED.fetch_add(1, Ordering::SeqCst);
    1.0
}

#[test]
fn arguments_are_not_evaluated_without_a_listener() {
    // Other tests of this binary may have scopes open on their own threads; this thread has
    // none, so nothing here listens.
    for _ in 0..10 {
        give!(x = expensive());
    }
    assert_eq!(EVALUATED.load(Ordering::SeqCst), 0);
    let gv = given();
    let events = gv.stream();
    give!(x = expensive());
    gv.finish().unwrap();
    assert_eq!(EVALUATED.load(Ordering::SeqCst), 1);
    assert_eq!(collect(events).len(), 1);
}

#[test]
fn keys_come_from_names_or_are_explicit() {
    let gv = given();
    let events = gv.stream();
    let loss = 0.5f32;
    let items: Vec<u32> = (0..2).collect();
    give!(loss);
    give!(loss, batch = items.len(), "lr.max" = 0.1, mode = "train");
    give!(progress = (3usize, 10usize), tag = None::<String>);
    gv.finish().unwrap();
    let events = collect(events);
    assert_eq!(events[0].to_string(), "loss=0.5");
    assert_eq!(
        events[1].to_string(),
        "loss=0.5 batch=2 lr.max=0.1 mode=train"
    );
    assert_eq!(events[2].to_string(), "progress=[3, 10] tag=null");
    assert_eq!(
        events[2].get_as::<(usize, usize)>("progress").unwrap(),
        (3, 10)
    );
    assert_eq!(items.len(), 2, "given variables are not moved");
}

#[test]
fn events_record_time_and_origin() {
    let before = giving::Timestamp::now();
    let gv = given();
    let events = gv.stream();
    give!(x = 1);
    let line = line!() - 1;
    gv.finish().unwrap();
    let event = &collect(events)[0];
    let origin = event.origin().unwrap();
    assert_eq!(origin.file, file!());
    assert_eq!(origin.line, line);
    assert!(event.time() >= before && event.time() <= giving::Timestamp::now());
}

#[test]
fn a_field_expression_may_itself_give() {
    fn inner() -> i32 {
        give!(inner = 1);
        2
    }
    let gv = given();
    let events = gv.stream();
    give!(outer = inner());
    gv.finish().unwrap();
    let events = collect(events);
    assert_eq!(shown(&events), vec!["inner=1", "outer=2"]);
    // Delivered first, stamped first: the outer event is stamped once its fields are made.
    assert!(events[0].time() <= events[1].time());
}

#[test]
fn a_field_expression_that_opens_and_finishes_a_scope_leaves_the_event_to_the_scopes_open_after_it()
{
    // The give checked its route before the field expression ran; the expression opens a
    // scope (which the thread enters), gives into both, and finishes it: the outer event
    // goes where the thread's routes say once its fields are made, the outer scope only.
    let gv = given();
    let events = gv.stream();
    let inner_events = std::cell::RefCell::new(None);
    give!(before = 0);
    give!(
        outer = {
            let inner = given();
            let stream = inner.stream();
            give!(both = 1);
            inner.finish().unwrap();
            *inner_events.borrow_mut() = Some(collect(stream));
            2
        }
    );
    give!(after = 3);
    gv.finish().unwrap();
    assert_eq!(
        shown(&collect(events)),
        vec!["before=0", "both=1", "outer=2", "after=3"]
    );
    assert_eq!(shown(&inner_events.take().unwrap()), vec!["both=1"]);
}

#[test]
fn a_field_expression_that_finishes_the_scope_given_into_drops_the_event() {
    // The scope finishes while the give's fields are made: as an event given after the
    // finish, the outer one reaches nobody (the stream ends with what came before).
    let gv = std::cell::RefCell::new(Some(given()));
    let events = gv.borrow().as_ref().unwrap().stream();
    give!(before = 1);
    give!(
        outer = {
            gv.borrow_mut().take().unwrap().finish().unwrap();
            2
        }
    );
    give!(after = 3);
    assert_eq!(shown(&collect(events)), vec!["before=1"]);
}

#[test]
fn wrong_key_and_type_errors_name_them() {
    let event = giving::event!(loss = "high", step = 3u64);
    let missing = event.get_as::<f64>("lr").unwrap_err();
    assert_eq!(
        missing.to_string(),
        "event has no key `lr` (its keys: loss, step)"
    );
    let wrong = event.get_as::<f64>("loss").unwrap_err();
    assert_eq!(
        wrong.to_string(),
        "key `loss`: expected f64, found str \"high\""
    );
    let narrow = giving::event!(step = 300u64)
        .get_as::<u8>("step")
        .unwrap_err();
    assert_eq!(narrow.to_string(), "key `step`: expected u8, found u64 300");
    let float_as_int = giving::event!(x = 1.5).get_as::<i64>("x").unwrap_err();
    assert_eq!(
        float_as_int.to_string(),
        "key `x`: expected i64, found f64 1.5"
    );
}

#[test]
fn values_round_trip_through_messagepack_and_json() {
    let event = giving::event!(
        loss = 0.25,
        step = 3u64,
        delta = -2,
        ok = true,
        name = "mlp",
        progress = (1u64, 4u64),
        nothing = ()
    );
    let packed = rmp_serde::to_vec(&event).unwrap();
    let back: Event = rmp_serde::from_slice(&packed).unwrap();
    assert_eq!(back, event);
    let json = serde_json::to_string(&event).unwrap();
    assert_eq!(
        json,
        r#"{"loss":0.25,"step":3,"delta":-2,"ok":true,"name":"mlp","progress":[1,4],"nothing":null}"#
    );
    let back: Event = serde_json::from_str(&json).unwrap();
    assert_eq!(back.get("delta"), Some(&Value::I64(-2)));
}

#[test]
fn inherited_fields_reach_iterate_and_nested_guards_stack() {
    use giving::{inherit, iterate};
    let gv = given();
    let events = gv.stream();
    {
        let _run = inherit!(run = "r1");
        {
            let _task = inherit!(task = "valid", phase = 2);
            for _ in iterate("train", 0..2) {} // iterate's own task wins
            give!(loss = 0.5);
        }
        give!(loss = 0.25);
    }
    give!(loss = 0.125);
    gv.finish().unwrap();
    let shown = shown(&collect(events));
    assert!(
        shown[0].starts_with("run=r1 phase=2 task=train"),
        "{shown:?}"
    );
    assert_eq!(shown[3], "run=r1 task=valid phase=2 loss=0.5");
    assert_eq!(shown[4], "run=r1 loss=0.25");
    assert_eq!(shown[5], "loss=0.125");
}

#[test]
fn without_a_context_events_carry_only_their_fields() {
    let gv = given();
    let events = gv.stream();
    give!(x = 1);
    gv.finish().unwrap();
    let events: Vec<giving::Event> = futures::executor::block_on(events.collect());
    assert_eq!(events[0].to_string(), "x=1");
    assert!(!events[0].has("$time") && !events[0].has("$line"));
}
