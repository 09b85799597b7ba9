//! `#[probe]` and selectors: one test per selector form, control flow, threads, async.

// A probe observes named bindings: returning one is the point of these functions.
#![allow(clippy::let_and_return)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::executor::block_on;
use giving::prelude::*;
use giving::{Event, Given, Probe, Value, WrapMark, WrapStep, given};

/// The events of `probe`, after `gv` has finished.
fn events(gv: Given, probe: Probe) -> Vec<String> {
    gv.finish().unwrap();
    block_on(probe.collect::<Vec<Event>>())
        .iter()
        .map(|e| e.to_string())
        .collect()
}

#[giving::probe]
fn accumulate(n: u32, scale: f64) -> f64 {
    let mut total = 0.0;
    let mut i = 0;
    while i < n {
        total += scale;
        i += 1;
    }
    let result = total * 2.0;
    result
}

#[test]
fn focus_after_gt_fires_at_each_assignment() {
    let gv = given();
    let probe = gv.probe("accumulate > total").unwrap();
    accumulate(3, 0.5);
    assert_eq!(
        events(gv, probe),
        ["total=0", "total=0.5", "total=1", "total=1.5"]
    );
}

/// `f > *`: every argument and binding, each under its own name; `*:f64` only those whose
/// type is `f64` (`scale` by its written type, `total` and `result` by their run-time type).
#[test]
fn a_wildcard_gives_every_variable_and_a_tag_filters_by_type() {
    let gv = given();
    let every = gv.probe("accumulate > *").unwrap();
    let floats = gv.probe("accumulate > $v:f64").unwrap();
    accumulate(1, 0.5);
    gv.finish().unwrap();
    let every: Vec<String> = block_on(every.map(|e| e.to_string()).collect());
    assert_eq!(
        every,
        [
            "n=1",
            "scale=0.5",
            "total=0",
            "i=0",
            "total=0.5",
            "i=1",
            "result=1"
        ]
    );
    let floats: Vec<String> = block_on(floats.map(|e| e.to_string()).collect());
    assert_eq!(floats, ["v=0.5", "v=0", "v=0.5", "v=1"]);
}

/// `f(*)`: every variable as context, one event when the call ends; `f(n) = 2.0` (ptera's
/// `f(a)=c`) only for calls returning 2.
#[test]
fn a_wildcard_capture_and_a_condition_on_the_return_value() {
    let gv = given();
    let every = gv.probe("accumulate(*)").unwrap();
    let returning = gv.probe("accumulate(n) = 2.0").unwrap();
    accumulate(1, 0.5);
    accumulate(2, 0.5);
    gv.finish().unwrap();
    let every: Vec<String> = block_on(every.map(|e| e.to_string()).collect());
    assert_eq!(
        every,
        [
            "n=1 scale=0.5 total=0.5 i=1 result=1",
            "n=2 scale=0.5 total=1 i=2 result=2"
        ]
    );
    let returning: Vec<String> = block_on(returning.map(|e| e.to_string()).collect());
    assert_eq!(returning, ["n=2 #value=2"]);
}

/// `f(x=1) > y` and `f > y=0`: a condition on a context variable, and on the focus.
#[test]
fn value_conditions_on_context_and_focus() {
    let gv = given();
    let context = gv.probe("accumulate(n=2) > i").unwrap();
    let focus = gv.probe("accumulate(n) > i=1").unwrap();
    let float = gv.probe("accumulate > total=1.0").unwrap();
    accumulate(1, 1.0);
    accumulate(2, 1.0);
    gv.finish().unwrap();
    let context: Vec<String> = block_on(context.map(|e| e.to_string()).collect());
    assert_eq!(context, ["n=2 i=0", "n=2 i=1", "n=2 i=2"]);
    let focus: Vec<String> = block_on(focus.map(|e| e.to_string()).collect());
    assert_eq!(focus, ["n=1 i=1", "n=2 i=1"]);
    let float: Vec<String> = block_on(float.map(|e| e.to_string()).collect());
    assert_eq!(float, ["total=1", "total=1"]);
}

#[test]
fn arguments_fire_at_entry() {
    let gv = given();
    let probe = gv.probe("accumulate > n").unwrap();
    accumulate(2, 1.0);
    accumulate(5, 1.0);
    assert_eq!(events(gv, probe), ["n=2", "n=5"]);
}

#[test]
fn context_variables_are_captured_with_the_focus() {
    let gv = given();
    let probe = gv.probe("accumulate(n, scale) > i").unwrap();
    accumulate(2, 0.25);
    assert_eq!(
        events(gv, probe),
        [
            "n=2 scale=0.25 i=0",
            "n=2 scale=0.25 i=1",
            "n=2 scale=0.25 i=2"
        ]
    );
}

#[test]
fn bang_marks_the_focus() {
    let gv = given();
    let probe = gv.probe("accumulate(n, !result)").unwrap();
    accumulate(2, 1.0);
    assert_eq!(events(gv, probe), ["n=2 result=4"]);
}

#[test]
fn captures_without_focus_fire_once_at_exit() {
    let gv = given();
    let probe = gv.probe("accumulate(n, total)").unwrap();
    accumulate(2, 1.0);
    assert_eq!(events(gv, probe), ["n=2 total=2"]);
}

#[test]
fn as_renames_fields() {
    let gv = given();
    let probe = gv.probe("accumulate(n as steps) > result as r").unwrap();
    accumulate(1, 3.0);
    assert_eq!(events(gv, probe), ["steps=1 r=6"]);
}

// Nesting: `outer > inner > x`, directly and through an un-annotated call.

#[giving::probe]
fn inner(x: i64) -> i64 {
    let y = x + 1;
    y
}

fn not_annotated(x: i64) -> i64 {
    inner(x * 10)
}

#[giving::probe]
fn outer(tag: i64) -> i64 {
    let direct = inner(tag);
    let indirect = not_annotated(tag);
    direct + indirect
}

#[giving::probe]
fn elsewhere() -> i64 {
    inner(100)
}

#[test]
fn nesting_directly_and_through_an_unannotated_call() {
    let gv = given();
    let probe = gv.probe("outer(tag) > inner > y").unwrap();
    outer(1);
    elsewhere(); // not inside outer: not selected
    inner(7); // not inside outer either
    assert_eq!(events(gv, probe), ["tag=1 y=2", "tag=1 y=11"]);
}

/// A selector that reads nothing of its outer functions: a call reuses what the previous one
/// found on the thread's stack while that stack has not changed, and searches again once it
/// has (an outer call began or ended).
#[test]
fn nesting_without_captures_follows_every_change_of_the_stack() {
    let gv = given();
    let probe = gv.probe("outer > inner > y").unwrap();
    let three = gv.probe("nest_top > outer > inner > y").unwrap();
    inner(7); // not inside outer
    outer(1);
    inner(8); // not inside outer any more
    elsewhere(); // nor here
    outer(2);
    nest_top(3);
    inner(9);
    gv.finish().unwrap();
    let strings = |probe: Probe| {
        block_on(probe.collect::<Vec<Event>>())
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(strings(three), ["y=4", "y=31"]);
    assert_eq!(
        strings(probe),
        ["y=2", "y=11", "y=3", "y=21", "y=4", "y=31"]
    );
}

#[test]
fn three_levels_of_nesting() {
    let gv = given();
    let probe = gv.probe("nest_top(label) > outer > inner > y").unwrap();
    nest_top(5);
    outer(3);
    assert_eq!(events(gv, probe), ["label=5 y=6", "label=5 y=51"]);
}

#[giving::probe]
fn nest_top(label: i64) -> i64 {
    outer(label)
}

// Specials.

#[giving::probe]
fn checked(x: i64) -> Result<i64, String> {
    if x < 0 {
        return Err(format!("negative: {x}"));
    }
    Ok(x * 3)
}

#[test]
fn value_enter_exit_error() {
    let gv = given();
    let values = gv.probe("checked > #value").unwrap();
    let enters = gv.probe("checked(x) > #enter").unwrap();
    let exits = gv.probe("checked(x, !#exit)").unwrap();
    let errors = gv.probe("checked(x) > #error as e").unwrap();
    checked(2).unwrap();
    checked(-1).unwrap_err();
    gv.finish().unwrap();
    assert_eq!(
        block_on(values.map(|e| e.to_string()).collect::<Vec<_>>()),
        ["#value=6", "#value=null"]
    );
    // `#enter` fires before the arguments are bound: `x` is not known yet.
    assert_eq!(
        block_on(enters.map(|e| e.to_string()).collect::<Vec<_>>()),
        ["#enter=true", "#enter=true"]
    );
    assert_eq!(
        block_on(exits.map(|e| e.to_string()).collect::<Vec<_>>()),
        ["x=2 #exit=true", "x=-1 #exit=true"]
    );
    assert_eq!(
        block_on(errors.map(|e| e.to_string()).collect::<Vec<_>>()),
        ["x=-1 e=negative: -1"]
    );
}

#[giving::probe]
fn epoch(batches: Vec<u32>) -> u32 {
    let mut seen = 0;
    for batch in batches {
        if batch == 99 {
            break;
        }
        if batch == 0 {
            continue;
        }
        seen += batch;
    }
    seen
}

#[test]
fn loop_markers_fire_per_iteration_including_continue_and_break() {
    let gv = given();
    let starts = gv.probe("epoch(batch) > #loop_batch").unwrap();
    let ends = gv.probe("epoch > #endloop_batch as done").unwrap();
    epoch(vec![1, 0, 2, 99, 5]);
    gv.finish().unwrap();
    let starts: Vec<String> = block_on(starts.map(|e| e.to_string()).collect());
    let ends: Vec<String> = block_on(ends.map(|e| e.to_string()).collect());
    assert_eq!(
        starts,
        [
            "batch=1 #loop_batch=true",
            "batch=0 #loop_batch=true",
            "batch=2 #loop_batch=true",
            "batch=99 #loop_batch=true"
        ]
    );
    assert_eq!(ends.len(), 4, "the iteration that breaks ends too");
}

#[test]
fn wrapper_probe_pairs_begin_and_end_for_wmap() {
    let gv = given();
    let probe = gv
        .probe("epoch(batch, !#loop_batch as start, !!#endloop_batch as end)")
        .unwrap();
    epoch(vec![3, 4]);
    gv.finish().unwrap();
    let events: Vec<Event> = block_on(probe.collect());
    assert_eq!(events.len(), 4);
    let marks: Vec<(WrapStep, u64)> = events
        .iter()
        .map(|e| {
            let mark = WrapMark::of(e).unwrap();
            assert_eq!(mark.name, "start");
            (mark.step, mark.id)
        })
        .collect();
    assert_eq!(marks[0].0, WrapStep::Begin);
    assert_eq!(marks[1], (WrapStep::End, marks[0].1));
    assert_eq!(marks[2].0, WrapStep::Begin);
    assert_eq!(marks[3], (WrapStep::End, marks[2].1));
    assert_ne!(marks[0].1, marks[2].1);
    assert_eq!(events[0].get_as::<u64>("batch").unwrap(), 3);
    assert!(events[0].get("start").is_some() && events[0].get("end").is_none());
    assert!(events[1].get("end").is_some() && events[1].get("start").is_none());

    // wmap pairs them: the batch of each bracketed iteration.
    let gv = given();
    let probe = gv
        .probe("epoch(batch, !#loop_batch as start, !!#endloop_batch as end)")
        .unwrap();
    let batches = gv.spawn(
        probe
            .wmap(
                "start",
                |begin| begin.get_as::<u64>("batch").unwrap(),
                |batch, _end| batch,
            )
            .collect::<Vec<_>>(),
    );
    epoch(vec![7, 8, 9]);
    gv.finish().unwrap();
    assert_eq!(batches.join().unwrap(), vec![7, 8, 9]);
}

#[test]
fn absolute_paths_and_bare_names() {
    let gv = given();
    let absolute = gv.probe("crate::nested::deep > z").unwrap();
    let by_crate = gv.probe("probes::nested::deep > z").unwrap();
    let by_module = gv.probe("nested::deep > z").unwrap();
    let bare = gv.probe("deep > z").unwrap();
    // ptera's spellings: `/module.path/f` and `//f`.
    let slashed = gv.probe("/probes.nested/deep > z").unwrap();
    let anywhere = gv.probe("//deep > z").unwrap();
    nested::deep(4);
    gv.finish().unwrap();
    for probe in [absolute, by_crate, by_module, bare, slashed, anywhere] {
        let events: Vec<String> = block_on(probe.map(|e| e.to_string()).collect());
        assert_eq!(events, ["z=16"]);
    }
    let error = given().probe("other::deep > z").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("no function instrumented with #[probe] is named `other::deep`"),
        "{error}"
    );
}

mod nested {
    #[giving::probe]
    pub fn deep(x: u32) -> u32 {
        let z = x * x;
        z
    }
}

// Control flow: early return, `?`, recursion.

#[derive(Debug)]
struct Bad;

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("bad input")
    }
}

fn parse(x: i32) -> Result<i32, Bad> {
    if x >= 0 { Ok(x) } else { Err(Bad) }
}

#[giving::probe]
fn early(x: i32) -> Result<i32, Bad> {
    let checked = parse(x)?;
    if checked == 0 {
        return Ok(-1);
    }
    let doubled = checked * 2;
    Ok(doubled)
}

#[test]
fn early_return_and_question_mark_still_exit_and_report() {
    let gv = given();
    let exits = gv.probe("early(x, checked, doubled)").unwrap();
    let values = gv.probe("early(x) > #value").unwrap();
    let errors = gv.probe("early(x) > #error").unwrap();
    assert_eq!(early(3).unwrap(), 6);
    assert_eq!(early(0).unwrap(), -1);
    assert!(early(-5).is_err());
    gv.finish().unwrap();
    let exits: Vec<String> = block_on(exits.map(|e| e.to_string()).collect());
    assert_eq!(exits, ["x=3 checked=3 doubled=6", "x=0 checked=0", "x=-5"]);
    let values: Vec<String> = block_on(values.map(|e| e.to_string()).collect());
    assert_eq!(
        values,
        ["x=3 #value=6", "x=0 #value=-1", "x=-5 #value=null"]
    );
    let errors: Vec<String> = block_on(errors.map(|e| e.to_string()).collect());
    assert_eq!(errors, ["x=-5 #error=bad input"]);
}

#[giving::probe]
fn factorial(n: u64) -> u64 {
    if n <= 1 {
        return 1;
    }
    let below = factorial(n - 1);
    let product = n * below;
    product
}

#[test]
fn recursion_gives_one_event_per_frame_with_its_own_context() {
    let gv = given();
    let probe = gv.probe("factorial(n) > product").unwrap();
    let nested = gv
        .probe("factorial(n as outer_n) > factorial(n, !#value)")
        .unwrap();
    assert_eq!(factorial(4), 24);
    gv.finish().unwrap();
    let products: Vec<String> = block_on(probe.map(|e| e.to_string()).collect());
    assert_eq!(
        products,
        ["n=2 product=2", "n=3 product=6", "n=4 product=24"]
    );
    // Each inner call sees its nearest enclosing call.
    let nested: Vec<String> = block_on(nested.map(|e| e.to_string()).collect());
    assert_eq!(
        nested,
        [
            "outer_n=2 n=1 #value=1",
            "outer_n=3 n=2 #value=2",
            "outer_n=4 n=3 #value=6"
        ]
    );
}

// Threads.

#[giving::probe]
fn work(id: u64) -> u64 {
    let mut acc = 0;
    for k in 0..3 {
        acc += id * 100 + k;
    }
    acc
}

#[test]
fn two_threads_probing_the_same_function_each_see_their_own_calls() {
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let threads: Vec<_> = [1u64, 2]
        .into_iter()
        .map(|id| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let gv = given();
                let probe = gv.probe("work > acc").unwrap();
                barrier.wait(); // both probes active at once
                for _ in 0..50 {
                    work(id);
                }
                barrier.wait();
                let values: Vec<u64> = {
                    gv.finish().unwrap();
                    block_on(probe.key::<u64>("acc").collect())
                };
                (id, values)
            })
        })
        .collect();
    for thread in threads {
        let (id, values) = thread.join().unwrap();
        assert_eq!(values.len(), 50 * 4);
        let expected = [0, id * 100, id * 200 + 1, id * 300 + 3];
        for chunk in values.chunks(4) {
            assert_eq!(chunk, expected, "thread {id} saw another thread's values");
        }
    }
}

#[test]
fn a_global_scope_probes_every_thread_and_a_carried_scope_its_threads() {
    let gv = Given::global();
    let probe = gv.probe("work(id) > #value").unwrap();
    std::thread::spawn(|| work(5)).join().unwrap();
    let ids: Vec<u64> = {
        gv.finish().unwrap();
        block_on(probe.key::<u64>("id").collect())
    };
    assert!(ids.contains(&5));

    let gv = given();
    let probe = gv.probe("work(id) > #value").unwrap();
    let handle = gv.handle();
    std::thread::spawn(move || {
        let _inside = handle.enter();
        work(6)
    })
    .join()
    .unwrap();
    std::thread::spawn(|| work(7)).join().unwrap(); // not carried: not probed
    let ids: Vec<u64> = {
        gv.finish().unwrap();
        block_on(probe.key::<u64>("id").collect())
    };
    assert_eq!(ids, [6]);
}

// Async functions.

#[giving::probe]
async fn fetch(n: u32) -> u32 {
    let before = n + 1;
    tokio::task::yield_now().await;
    let after = before * 10;
    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    after
}

#[giving::probe]
async fn pipeline(label: u32) -> u32 {
    let a = fetch(label).await;
    tokio::task::yield_now().await;
    let b = fetch(label + 1).await;
    a + b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_functions_across_await() {
    let gv = Given::global();
    let probe = gv
        .probe("pipeline(label) > fetch(n, before, !after)")
        .unwrap();
    let values = gv.probe("pipeline > #value").unwrap();
    // Several tasks at once, interleaving on the workers: each fetch sees its own pipeline.
    let tasks: Vec<_> = [10u32, 20, 30]
        .into_iter()
        .map(|label| tokio::spawn(pipeline(label)))
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    fetch(1).await; // not inside pipeline
    gv.finish_async().await.unwrap();
    let mut events: Vec<String> = probe.map(|e| e.to_string()).collect().await;
    events.sort();
    assert_eq!(
        events,
        [
            "label=10 n=10 before=11 after=110",
            "label=10 n=11 before=12 after=120",
            "label=20 n=20 before=21 after=210",
            "label=20 n=21 before=22 after=220",
            "label=30 n=30 before=31 after=310",
            "label=30 n=31 before=32 after=320"
        ]
    );
    let mut values: Vec<u64> = values.key::<u64>("#value").collect().await;
    values.sort();
    assert_eq!(values, [230, 430, 630]);
}

// Spawned tasks (issue 28): a task spawned inside a probed function.

#[giving::probe]
async fn spawned_inner(x: u32) -> u32 {
    tokio::task::yield_now().await;
    let y = x + 1;
    y
}

/// Spawns `spawned_inner` from inside a probed call, carried or not; returns its handle
/// without awaiting it, so the task may run after this call returned.
#[giving::probe]
fn spawner(tag: u32, carried: bool) -> tokio::task::JoinHandle<u32> {
    let task = if carried {
        tokio::spawn(giving::probe::carry(spawned_inner(tag)))
    } else {
        tokio::spawn(spawned_inner(tag))
    };
    task
}

/// A spawned task starts with an empty stack of probed calls: `spawner > spawned_inner > y`
/// does not see it unless the future is wrapped in `giving::probe::carry`, which brings the
/// enclosing calls (and their values as last set, even after `spawner` returned) to every
/// poll, on whichever worker thread. `spawned_inner > y` sees both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_task_keeps_its_nesting_only_when_carried() {
    let gv = Given::global();
    let nested = gv.probe("spawner(tag) > spawned_inner > y").unwrap();
    let alone = gv.probe("spawned_inner > y").unwrap();
    let plain = spawner(1, false);
    let carried = spawner(2, true);
    assert_eq!(plain.await.unwrap(), 2);
    assert_eq!(carried.await.unwrap(), 3);
    gv.finish_async().await.unwrap();
    let nested: Vec<String> = nested.map(|e| e.to_string()).collect().await;
    assert_eq!(nested, ["tag=2 y=3"]);
    let mut alone: Vec<String> = alone.map(|e| e.to_string()).collect().await;
    alone.sort();
    assert_eq!(alone, ["y=2", "y=3"]);
}

/// `spawned_inner` again, for a selector that reads nothing of its enclosing function.
#[giving::probe]
async fn spawned_lone(x: u32) -> u32 {
    tokio::task::yield_now().await;
    let y = x + 1;
    y
}

/// `spawner` again, spawning `spawned_lone`.
#[giving::probe]
fn lone_spawner(tag: u32, carried: bool) -> tokio::task::JoinHandle<u32> {
    let task = if carried {
        tokio::spawn(giving::probe::carry(spawned_lone(tag)))
    } else {
        tokio::spawn(spawned_lone(tag))
    };
    task
}

/// A selector that reads nothing of its outer function: `spawned_lone` then takes no frame,
/// and asks at its event whether the polling thread's stack (the carried frames, pushed
/// around each poll) holds `lone_spawner`, as a frame would at its first poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_carried_task_is_inside_an_outer_function_it_reads_nothing_of() {
    let gv = Given::global();
    let nested = gv.probe("lone_spawner > spawned_lone > y").unwrap();
    let plain = lone_spawner(1, false);
    let carried = lone_spawner(2, true);
    assert_eq!(plain.await.unwrap(), 2);
    assert_eq!(carried.await.unwrap(), 3);
    assert_eq!(spawned_lone(3).await, 4); // not inside lone_spawner
    gv.finish_async().await.unwrap();
    let nested: Vec<String> = nested.map(|e| e.to_string()).collect().await;
    assert_eq!(nested, ["y=3"]);
}

// Methods.

struct Model {
    weight: f64,
}

#[giving::probe]
impl Model {
    fn forward(&self, x: f64) -> f64 {
        let out = x * self.weight;
        out
    }

    fn reset(&mut self) {
        self.weight = 1.0;
    }
}

struct Other;

impl Other {
    #[giving::probe]
    fn forward(&self, x: f64) -> f64 {
        let out = -x;
        out
    }
}

#[test]
fn methods_by_type_and_by_name() {
    let gv = given();
    let typed = gv.probe("Model::forward(x) > out").unwrap();
    let dotted = gv.probe("Model.forward(x) > out").unwrap();
    let by_name = gv.probe("forward > out").unwrap();
    let mut model = Model { weight: 2.0 };
    model.forward(3.0);
    model.reset();
    Other.forward(1.0);
    gv.finish().unwrap();
    let typed: Vec<String> = block_on(typed.map(|e| e.to_string()).collect());
    let by_name: Vec<String> = block_on(by_name.map(|e| e.to_string()).collect());
    assert_eq!(typed, ["x=3 out=6"]);
    let dotted: Vec<String> = block_on(dotted.map(|e| e.to_string()).collect());
    assert_eq!(dotted, typed);
    assert_eq!(by_name, ["out=6", "out=-1"]);
}

// Values without a conversion give their type's name.

#[derive(Clone)]
struct Opaque(#[allow(dead_code)] u8);

#[giving::probe]
fn opaque() -> usize {
    let thing = Opaque(1);
    let things = vec![thing];
    things.len()
}

#[test]
fn values_without_conversion_give_their_type_name() {
    let gv = given();
    let probe = gv.probe("opaque > thing").unwrap();
    opaque();
    let events: Vec<Event> = {
        gv.finish().unwrap();
        block_on(probe.collect())
    };
    assert_eq!(events[0].get("thing"), Some(&Value::from("probes::Opaque")));
}

// Lifetime of a probe.

#[test]
fn a_probe_ends_with_its_scope_and_stops_when_dropped() {
    let gv = given();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let pipeline = gv.spawn(
        gv.probe("inner > y")
            .unwrap()
            .inspect(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
            })
            .count(),
    );
    inner(1);
    inner(2);
    gv.finish().unwrap(); // completes the probe's stream, so `count` emits
    assert_eq!(pipeline.join().unwrap(), 2);
    assert_eq!(seen.load(Ordering::SeqCst), 2);

    let gv = given();
    let probe = gv.probe("inner > y").unwrap();
    drop(probe);
    inner(3); // nobody probes: nothing is kept anywhere
    let later = gv.probe("inner > y").unwrap();
    inner(4);
    assert_eq!(events(gv, later), ["y=5"]);
}

#[test]
fn a_selector_naming_no_function_suggests_the_closest() {
    let error = given().probe("acumulate > total").unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("named `acumulate` (column 1)"),
        "{message}"
    );
    assert!(message.contains("closest: accumulate"), "{message}");

    let error = given().probe("accumulate > totl").unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("`accumulate` has no variable `totl` (column 14); it has: "),
        "{message}"
    );
    assert!(message.contains("total"), "{message}");
}

// Generic functions: concrete bindings give values, generic ones their instantiated type name.

#[giving::probe]
fn scaled<T: Clone>(item: T, factor: f64) -> Vec<T> {
    let copies = (factor * 2.0) as usize;
    let mut out = Vec::new();
    for _ in 0..copies {
        out.push(item.clone());
    }
    out
}

#[test]
fn generic_functions_give_concrete_values_and_generic_type_names() {
    let gv = given();
    let probe = gv.probe("scaled(item, copies, !#value as out)").unwrap();
    scaled(7u8, 1.0);
    scaled(Opaque(1), 0.5);
    assert_eq!(
        events(gv, probe),
        [
            "item=7 copies=2 out=[7, 7]",
            "item=probes::Opaque copies=1 out=alloc::vec::Vec<probes::Opaque>"
        ]
    );
}

#[giving::probe]
fn reused(a: i64) -> i64 {
    let b = a + 1;
    b
}

/// A thread's pooled frame keeps its plan and matches for the next call of its function: each
/// change of the probes (a new epoch) must still be seen by the very next call.
#[test]
fn a_pooled_frame_follows_each_change_of_the_probes() {
    let gv = given();
    let first = gv.probe("reused > a").unwrap();
    reused(1);
    reused(2);
    // A second probe on the same function: the pooled frame's plan is stale.
    let second = gv.probe("reused(a) > b").unwrap();
    reused(3);
    drop(first);
    reused(4);
    gv.finish().unwrap();
    let second: Vec<String> = block_on(second.map(|e| e.to_string()).collect());
    assert_eq!(second, ["a=3 b=4", "a=4 b=5"]);
    // Nobody probes it now; a new scope's probe is matched afresh.
    reused(5);
    let gv = given();
    let third = gv.probe("reused > b").unwrap();
    reused(6);
    assert_eq!(events(gv, third), ["b=7"]);
}

/// A frame reused on a thread that is not in the probe's scope gives it nothing: the scope is
/// checked at each call, not cached with the plan.
#[test]
fn a_pooled_frame_still_checks_the_calling_threads_scope() {
    let gv = given();
    let probe = gv.probe("reused > b").unwrap();
    reused(10);
    std::thread::spawn(|| {
        // Another thread, outside the scope: warms its own pool, gives nothing.
        reused(20);
        reused(21);
    })
    .join()
    .unwrap();
    reused(11);
    assert_eq!(events(gv, probe), ["b=11", "b=12"]);
}

/// Lone `f > x` probes take a shortcut (their event built straight from the value): two of
/// them on one variable both get it, and beside a probe that also reads the frame (`f(a) > x`)
/// or ends at `#exit`, every probe still gets its own event.
#[test]
fn lone_probes_share_a_variable_with_each_other_and_with_fuller_probes() {
    let gv = given();
    let first = gv.probe("accumulate > result").unwrap();
    let second = gv.probe("accumulate > result as r").unwrap();
    accumulate(1, 1.0);
    let with_context = gv.probe("accumulate(n) > result").unwrap();
    let at_exit = gv.probe("accumulate(scale)").unwrap();
    accumulate(2, 1.0);
    drop(second);
    accumulate(1, 5.0);
    gv.finish().unwrap();
    let collect =
        |probe: Probe| -> Vec<String> { block_on(probe.map(|e| e.to_string()).collect()) };
    assert_eq!(collect(first), ["result=2", "result=4", "result=10"]);
    assert_eq!(collect(with_context), ["n=2 result=4", "n=1 result=10"]);
    assert_eq!(collect(at_exit), ["scale=1", "scale=5"]);
}
