//! Semantics of every keyed operator (`EventStreamOps`, `ValueStreamOps`) and of `wrap!`:
//! hand-made events, empty streams, completion, and events given through real `given()` scopes.

use std::cell::Cell;
use std::time::Duration;

use futures::executor::block_on;
use giving::prelude::*;
use giving::{
    Event, Value, WrapMark, WrapStep, event, give, given,
    vocab::keys::{TAG_GROUP, TAG_WORD, WRAP},
    wrap,
};

fn run<T>(stream: impl Stream<Item = T>) -> Vec<T> {
    block_on(stream.collect())
}

fn texts(stream: impl Stream<Item = Event>) -> Vec<String> {
    run(stream.map(|e| e.to_string()))
}

fn events(list: Vec<Event>) -> impl Stream<Item = Event> {
    futures::stream::iter(list)
}

fn none() -> impl Stream<Item = Event> {
    futures::stream::empty()
}

fn sample() -> impl Stream<Item = Event> {
    events(vec![
        event!(step = 1u64, loss = 0.5),
        event!(step = 2u64, loss = 0.25, mode = "test"),
        event!(lr = 0.1),
    ])
}

// ---------------------------------------------------------------------------------------------
// where_, where_eq, where_with, where_any
// ---------------------------------------------------------------------------------------------

#[test]
fn where_keeps_events_with_every_key_and_none_of_the_negated_ones() {
    assert_eq!(run(sample().where_(["step", "loss"])).len(), 2);
    assert_eq!(
        texts(sample().where_(["loss", "!mode"])),
        vec!["step=1 loss=0.5"]
    );
    assert_eq!(texts(sample().where_(["!step"])), vec!["lr=0.1"]);
    assert_eq!(run(sample().where_(["nothing"])).len(), 0);
    assert_eq!(run(sample().where_(Vec::<&str>::new())).len(), 3);
    assert!(run(none().where_(["loss"])).is_empty());
}

#[test]
fn where_eq_compares_values_and_skips_events_without_the_key() {
    assert_eq!(run(sample().where_eq("mode", "test")).len(), 1);
    assert_eq!(run(sample().where_eq("step", 1u64)).len(), 1);
    assert_eq!(run(sample().where_eq("mode", "train")).len(), 0);
    assert!(run(none().where_eq("mode", "test")).is_empty());
}

#[test]
fn where_with_applies_the_predicate_to_present_values() {
    let low = sample().where_with("loss", |v| v.as_f64().is_some_and(|x| x < 0.3));
    assert_eq!(run(low.key::<u64>("step")), vec![2]);
    // Events without the key never reach the predicate.
    let all = sample().where_with("loss", |_| true);
    assert_eq!(run(all).len(), 2);
}

#[test]
fn where_any_keeps_events_with_at_least_one_key() {
    assert_eq!(run(sample().where_any(["mode", "lr"])).len(), 2);
    assert_eq!(run(sample().where_any(["nothing"])).len(), 0);
    assert_eq!(run(sample().where_any(Vec::<&str>::new())).len(), 0);
    assert!(run(none().where_any(["lr"])).is_empty());
}

// ---------------------------------------------------------------------------------------------
// keep, keep_as, kmap, kfilter
// ---------------------------------------------------------------------------------------------

#[test]
fn keep_keeps_the_listed_fields_and_drops_events_with_none() {
    assert_eq!(
        texts(sample().keep(["loss", "step"])),
        vec!["loss=0.5 step=1", "loss=0.25 step=2"]
    );
    assert_eq!(texts(sample().keep(["lr"])), vec!["lr=0.1"]);
    assert!(run(none().keep(["lr"])).is_empty());
}

#[test]
fn keep_as_renames() {
    assert_eq!(
        texts(sample().keep_as([("loss", "train_loss"), ("lr", "rate")])),
        vec!["train_loss=0.5", "train_loss=0.25", "rate=0.1"]
    );
}

#[test]
fn kept_events_keep_their_time_and_origin() {
    let original = event!(loss = 0.5, step = 1);
    let kept = run(events(vec![original.clone()]).keep(["loss"]));
    assert_eq!(kept[0].time(), original.time());
    assert_eq!(kept[0].origin(), original.origin());
}

#[test]
fn kmap_and_kfilter_read_fields() {
    let products = sample()
        .where_(["step", "loss"])
        .kmap(|e| e.get_as::<f64>("step").unwrap() * e.get_as::<f64>("loss").unwrap());
    assert_eq!(run(products), vec![0.5, 0.5]);
    assert_eq!(run(sample().kfilter(|e| e.len() == 1)).len(), 1);
    assert!(run(none().kmap(|e| e.len())).is_empty());
    assert!(run(none().kfilter(|_| true)).is_empty());
}

// ---------------------------------------------------------------------------------------------
// key, try_key, sole
// ---------------------------------------------------------------------------------------------

#[test]
fn key_skips_missing_keys_and_values_of_another_type() {
    let mixed = events(vec![
        event!(loss = 0.5),
        event!(other = 1),
        event!(loss = "nan?"),
        event!(loss = 2u64),
    ]);
    assert_eq!(run(mixed.key::<f64>("loss")), vec![0.5, 2.0]);
    // A float never reads as an integer.
    assert_eq!(run(sample().key::<u64>("loss")), Vec::<u64>::new());
    assert!(run(none().key::<f64>("loss")).is_empty());
}

#[test]
fn try_key_reports_type_errors_and_skips_missing_keys() {
    let mixed = events(vec![
        event!(loss = 0.5),
        event!(other = 1),
        event!(loss = "x"),
    ]);
    let got = run(mixed.try_key::<f64>("loss"));
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], Ok(0.5));
    assert_eq!(
        got[1].as_ref().unwrap_err().to_string(),
        "key `loss`: expected f64, found str \"x\""
    );
}

#[test]
fn sole_reads_single_field_events_only() {
    let mixed = events(vec![
        event!(a = 1),
        event!(a = 2, b = 3),
        Event::builder().build(),
        event!(c = "x"),
        event!(d = 4),
    ]);
    assert_eq!(run(mixed.sole::<i64>()), vec![1, 4]);
    let values = run(sample().sole::<Value>());
    assert_eq!(values, vec![Value::F64(0.1)]);
    assert!(run(none().sole::<Value>()).is_empty());
}

// ---------------------------------------------------------------------------------------------
// augment, as_key, affix
// ---------------------------------------------------------------------------------------------

#[test]
fn augment_adds_a_field_or_replaces_it_in_place() {
    let added = sample()
        .where_(["loss"])
        .augment("double", |e| e.get_as::<f64>("loss").unwrap() * 2.0);
    assert_eq!(
        texts(added),
        vec![
            "step=1 loss=0.5 double=1",
            "step=2 loss=0.25 mode=test double=0.5"
        ]
    );
    let replaced = sample().where_(["loss"]).augment("loss", |_| 0.0);
    assert_eq!(texts(replaced)[0], "step=1 loss=0");
    assert!(run(none().augment("x", |_| 1)).is_empty());
}

#[test]
fn as_key_wraps_values_into_events() {
    let out = texts(futures::stream::iter([1u64, 2]).as_key("step"));
    assert_eq!(out, vec!["step=1", "step=2"]);
    assert!(run(futures::stream::empty::<f64>().as_key("x")).is_empty());
}

#[test]
fn affix_zips_another_stream_in_as_a_field() {
    let out = texts(sample().affix("epoch", futures::stream::iter([7u64, 8, 9])));
    assert_eq!(
        out,
        vec![
            "step=1 loss=0.5 epoch=7",
            "step=2 loss=0.25 mode=test epoch=8",
            "lr=0.1 epoch=9"
        ]
    );
    // Completes with the shorter stream, either side.
    assert_eq!(
        run(sample().affix("x", futures::stream::iter([1]))).len(),
        1
    );
    let short = events(vec![event!(a = 1)]);
    assert_eq!(run(short.affix("x", futures::stream::iter(0..))).len(), 1);
    assert!(run(none().affix("x", futures::stream::iter([1]))).is_empty());
    // An existing field is replaced.
    let out = texts(sample().affix("step", futures::stream::iter([10u64, 20, 30])));
    assert_eq!(out[0], "step=10 loss=0.5");
}

#[test]
fn affix_with_derives_the_stream_from_the_events() {
    let losses = events(vec![
        event!(loss = 0.5),
        event!(loss = 0.7),
        event!(loss = 0.2),
    ]);
    let out = texts(losses.affix_with("best", |s| s.key::<f64>("loss").min_scan()));
    assert_eq!(
        out,
        vec![
            "loss=0.5 best=0.5",
            "loss=0.7 best=0.5",
            "loss=0.2 best=0.2"
        ]
    );
    assert!(run(none().affix_with("n", |s| s.count_scan().map(|n| n as u64))).is_empty());
}

// ---------------------------------------------------------------------------------------------
// kmerge, kscan
// ---------------------------------------------------------------------------------------------

#[test]
fn kmerge_merges_every_event_at_completion() {
    let stream = events(vec![
        event!(x = 1),
        event!(y = 2),
        event!(x = 3),
        event!(z = 4),
    ]);
    let merged = block_on(stream.kmerge()).unwrap();
    assert_eq!(merged.to_string(), "x=3 y=2 z=4");
    assert_eq!(block_on(none().kmerge()), None);
    // As a stream: at most one event.
    assert_eq!(
        texts(sample().kmerge()),
        vec!["step=2 loss=0.25 mode=test lr=0.1"]
    );
    assert!(run(none().kmerge()).is_empty());
}

#[test]
fn kmerge_takes_time_and_origin_from_the_last_event() {
    let first = Event::builder()
        .field("a", 1)
        .time(giving::Timestamp::from_nanos(5))
        .build();
    let last = event!(b = 2);
    let merged = block_on(events(vec![first, last.clone()]).kmerge()).unwrap();
    assert_eq!(merged.time(), last.time());
    assert_eq!(merged.origin(), last.origin());
}

#[test]
fn kscan_gives_the_running_merge() {
    let stream = events(vec![
        event!(x = 1),
        event!(y = 2),
        event!(x = 3),
        event!(z = 4),
    ]);
    assert_eq!(
        texts(stream.kscan()),
        vec!["x=1", "x=1 y=2", "x=3 y=2", "x=3 y=2 z=4"]
    );
    assert!(run(none().kscan()).is_empty());
}

// ---------------------------------------------------------------------------------------------
// collect_between
// ---------------------------------------------------------------------------------------------

#[test]
fn collect_between_merges_from_start_to_end() {
    // Python giving's example.
    let stream = events(vec![
        event!(A = 1),
        event!(B = 2),
        event!(C = 3, D = 4, A = 5),
        event!(Z = 6),
    ]);
    assert_eq!(
        texts(stream.collect_between("A", "Z")),
        vec!["C=3 D=4 A=5 Z=6"]
    );

    let stream = events(vec![
        event!(B = 0),
        event!(Z = 0),
        event!(A = 1),
        event!(B = 2),
        event!(Z = 3),
        event!(B = 4),
        event!(A = 5, Z = 6),
        event!(A = 7),
    ]);
    // Events outside a group and an end without a start are ignored; an event with both keys
    // is a group by itself; an unfinished group gives nothing at completion.
    assert_eq!(
        texts(stream.collect_between("A", "Z")),
        vec!["A=1 B=2 Z=3", "A=5 Z=6"]
    );
    assert!(run(none().collect_between("A", "Z")).is_empty());
}

#[test]
fn collect_between_by_collects_interleaved_groups_apart() {
    let stream = events(vec![
        event!(w = 1, start = true),
        event!(w = 2, start = true),
        event!(x = 0),
        event!(w = 1, x = 10),
        event!(w = 2, x = 20),
        event!(w = 2, end = true),
        event!(w = 1, end = true),
    ]);
    assert_eq!(
        texts(stream.collect_between_by("start", "end", "w")),
        vec![
            "w=2 start=true x=20 end=true",
            "w=1 start=true x=10 end=true"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// kflatten, tag
// ---------------------------------------------------------------------------------------------

#[test]
fn kflatten_expands_list_fields() {
    let stream = events(vec![
        event!(step = 1, xs = vec![1, 2, 3]),
        event!(step = 2, xs = Vec::<i64>::new()),
        event!(step = 3, xs = 4),
        event!(step = 4),
    ]);
    assert_eq!(
        texts(stream.kflatten("xs")),
        vec![
            "step=1 xs=1",
            "step=1 xs=2",
            "step=1 xs=3",
            "step=3 xs=4",
            "step=4"
        ]
    );
    assert!(run(none().kflatten("xs")).is_empty());
}

#[test]
fn tag_adds_a_unique_word_first() {
    let tagged = run(events((0..1000).map(|i| event!(i)).collect()).tag_group("tests-unique"));
    let words: std::collections::HashSet<String> = tagged
        .iter()
        .map(|e| e.get_as::<String>(TAG_WORD).unwrap())
        .collect();
    assert_eq!(words.len(), 1000);
    assert!(words.iter().all(|w| w.len() >= 6 && w.is_ascii()));
    assert_eq!(
        tagged[0].keys().collect::<Vec<_>>(),
        vec![TAG_WORD, "i", TAG_GROUP]
    );
    assert_eq!(
        tagged[0].get_as::<String>(TAG_GROUP).unwrap(),
        "tests-unique"
    );
    // Tagging again replaces the word; without a group there is no `$group`.
    let manual = Event::builder()
        .field("i", 1)
        .field(TAG_WORD, "manual")
        .field(TAG_GROUP, "g")
        .build();
    let retagged = run(events(vec![manual]).tag());
    assert_eq!(
        retagged[0].keys().collect::<Vec<_>>(),
        vec![TAG_WORD, "i", TAG_GROUP]
    );
    assert_ne!(retagged[0].get_as::<String>(TAG_WORD).unwrap(), "manual");
    let plain = run(sample().tag());
    assert!(plain.iter().all(|e| !e.has(TAG_GROUP)));
    assert!(run(none().tag()).is_empty());
}

#[test]
fn tag_groups_are_independent_sequences() {
    let a = run(events(vec![event!(x = 1)]).tag_group("tests-seq-a"));
    let b = run(events(vec![event!(x = 1)]).tag_group("tests-seq-b"));
    // Both groups start at the same first word.
    assert_eq!(a[0].get(TAG_WORD), b[0].get(TAG_WORD));
}

// ---------------------------------------------------------------------------------------------
// format, display
// ---------------------------------------------------------------------------------------------

#[test]
fn format_renders_templates() {
    let one = || events(vec![event!(step = 7u64, loss = 0.123456, mode = "ab")]);
    let render = |template: &str| run(one().format(template).unwrap()).remove(0);
    assert_eq!(render("{step}: {loss:.3}"), "7: 0.123");
    assert_eq!(render("[{step:>4}]"), "[   7]");
    assert_eq!(render("[{step:0>4}]"), "[0007]");
    assert_eq!(render("[{mode:*^6}]"), "[**ab**]");
    assert_eq!(render("[{mode:4}]"), "[ab  ]");
    assert_eq!(render("[{step:4}]"), "[   7]");
    assert_eq!(render("{loss:>8.2}|"), "    0.12|");
    assert_eq!(render("{{{step}}}"), "{7}");
    assert_eq!(render("{}"), "step=7 loss=0.123456 mode=ab");
}

#[test]
fn format_skips_events_missing_a_field() {
    let lines = run(sample().format("{step} {mode}").unwrap());
    assert_eq!(lines, vec!["2 test"]);
    assert!(run(none().format("{x}").unwrap()).is_empty());
}

#[test]
fn a_bad_template_is_an_error_naming_the_position() {
    let error = sample().format("loss {loss").err().unwrap();
    assert_eq!(error.at, 5);
    assert!(error.to_string().contains("at byte 5"), "{error}");
    assert_eq!(sample().format("a } b").err().unwrap().at, 2);
    assert_eq!(sample().format("{x:??}").err().unwrap().at, 0);
}

#[test]
fn display_completes_with_the_stream() {
    block_on(sample().display());
    block_on(none().display());
}

// ---------------------------------------------------------------------------------------------
// Through real scopes
// ---------------------------------------------------------------------------------------------

#[test]
fn keyed_pipelines_on_given_events_complete_with_the_scope() {
    let gv = given();
    let best = gv.spawn(gv.stream().key::<f64>("loss").min());
    let merged = gv.spawn(gv.stream().where_(["step"]).kmerge());
    let lines = gv.spawn(
        gv.stream()
            .format("{step}:{loss:.1}")
            .unwrap()
            .collect::<Vec<_>>(),
    );
    for step in 0..4u64 {
        let loss = 1.0 / (step + 1) as f64;
        give!(step, loss);
    }
    give!(lr = 0.5);
    gv.finish().unwrap();
    assert_eq!(best.join().unwrap(), Some(0.25));
    assert_eq!(
        merged.join().unwrap().unwrap().to_string(),
        "step=3 loss=0.25"
    );
    assert_eq!(
        lines.join().unwrap(),
        vec!["0:1.0", "1:0.5", "2:0.3", "3:0.2"]
    );
}

#[test]
fn a_scope_with_nothing_given_completes_every_keyed_operator() {
    let gv = given();
    let a = gv.spawn(gv.stream().kmerge());
    let b = gv.spawn(gv.stream().kscan().count());
    let c = gv.spawn(gv.stream().collect_between("a", "b").count());
    let d = gv.spawn(gv.stream().group_wrap("w").count());
    let e = gv.spawn(gv.stream().wmap("w", |_| (), |(), _| ()).count());
    let f = gv.spawn(gv.stream().kflatten("x").tag().sole::<Value>().count());
    gv.finish().unwrap();
    assert_eq!(a.join().unwrap(), None);
    for count in [b, c, d, e, f] {
        assert_eq!(count.join().unwrap(), 0);
    }
}

// ---------------------------------------------------------------------------------------------
// wrap!, group_wrap, wmap
// ---------------------------------------------------------------------------------------------

#[test]
fn wrap_gives_begin_and_end_with_the_fields() {
    let gv = given();
    let stream = gv.stream();
    {
        let mut block = wrap!("epoch", epoch = 3u64);
        assert!(block.is_active());
        give!(loss = 0.5);
        block.set("accuracy", 0.9);
        block.set("epoch", 4u64);
    }
    wrap!("bare").end();
    gv.finish().unwrap();
    let events = run(stream);
    assert_eq!(events.len(), 5);
    let begin = WrapMark::of(&events[0]).unwrap();
    let end = WrapMark::of(&events[2]).unwrap();
    assert_eq!((begin.name, begin.step), ("epoch", WrapStep::Begin));
    assert_eq!(
        (end.name, end.step, end.id),
        ("epoch", WrapStep::End, begin.id)
    );
    assert_eq!(events[0].keys().collect::<Vec<_>>(), vec![WRAP, "epoch"]);
    assert_eq!(events[0].get_as::<u64>("epoch").unwrap(), 3);
    assert_eq!(events[2].get_as::<u64>("epoch").unwrap(), 4);
    assert_eq!(events[2].get_as::<f64>("accuracy").unwrap(), 0.9);
    assert!(WrapMark::of(&events[1]).is_none());
    let bare = WrapMark::of(&events[3]).unwrap();
    assert_eq!((bare.name, bare.step), ("bare", WrapStep::Begin));
    assert_ne!(bare.id, begin.id);
    assert_eq!(events[2].origin().unwrap().file, file!());
}

#[test]
fn wrap_without_a_listener_gives_nothing_and_evaluates_nothing() {
    let evaluated = Cell::new(false);
    let touch = || {
        evaluated.set(true);
        1
    };
    let block = wrap!("w", x = touch());
    assert!(!block.is_active());
    assert_eq!(block.id(), None);
    drop(block);
    assert!(!evaluated.get());

    // A block begun before the scope opened gives no end either.
    let block = wrap!("w");
    let gv = given();
    let stream = gv.stream();
    drop(block);
    gv.finish().unwrap();
    assert!(run(stream).is_empty());
}

#[test]
fn wrap_ends_the_block_when_unwinding() {
    let gv = given();
    let stream = gv.stream();
    let result = std::panic::catch_unwind(|| {
        let _block = wrap!("risky");
        panic!("boom");
    });
    assert!(result.is_err());
    gv.finish().unwrap();
    let steps: Vec<WrapStep> = run(stream)
        .iter()
        .map(|e| WrapMark::of(e).unwrap().step)
        .collect();
    assert_eq!(steps, vec![WrapStep::Begin, WrapStep::End]);
}

#[test]
fn group_wrap_groups_the_events_of_each_block_consumed_one_after_the_other() {
    let gv = given();
    let sums = gv.spawn(
        gv.stream()
            .group_wrap("epoch")
            .then(|group| {
                let epoch = group.begin().get_as::<u64>("epoch").unwrap();
                async move { (epoch, group.key::<u64>("x").collect::<Vec<_>>().await) }
            })
            .collect::<Vec<_>>(),
    );
    give!(x = 100u64); // outside any block
    for epoch in 0..3u64 {
        let _epoch = wrap!("epoch", epoch);
        for x in 0..=epoch {
            give!(x);
        }
        let _other = wrap!("step"); // another name: its $wrap events are not in the group
        give!(x = 9u64);
    }
    give!(x = 100u64);
    gv.finish().unwrap();
    assert_eq!(
        sums.join().unwrap(),
        vec![(0, vec![0, 9]), (1, vec![0, 1, 9]), (2, vec![0, 1, 2, 9])]
    );
}

#[test]
fn group_wrap_groups_can_be_read_after_the_outer_stream() {
    let gv = given();
    let stream = gv.stream();
    for i in 0..3u64 {
        let _b = wrap!("b");
        give!(i);
    }
    gv.finish().unwrap();
    block_on(async {
        let groups: Vec<_> = stream.group_wrap("b").collect().await;
        assert_eq!(groups.len(), 3);
        let mut out = Vec::new();
        for group in groups.into_iter().rev() {
            out.push(group.key::<u64>("i").collect::<Vec<_>>().await);
        }
        assert_eq!(out, vec![vec![2], vec![1], vec![0]]);
    });
}

#[test]
fn group_wrap_nested_blocks_both_receive_inner_events() {
    let gv = given();
    let stream = gv.stream();
    {
        let _outer = wrap!("w", level = 0);
        give!(a = 1);
        {
            let _inner = wrap!("w", level = 1);
            give!(a = 2);
        }
        give!(a = 3);
    }
    gv.finish().unwrap();
    block_on(async {
        let groups: Vec<_> = stream.group_wrap("w").collect().await;
        let mut out = Vec::new();
        for group in groups {
            let level = group.begin().get_as::<i64>("level").unwrap();
            out.push((level, group.key::<i64>("a").collect::<Vec<_>>().await));
        }
        assert_eq!(out, vec![(0, vec![1, 2, 3]), (1, vec![2])]);
    });
}

#[test]
fn group_wrap_groups_complete_when_the_scope_ends_mid_block() {
    let gv = given();
    let stream = gv.stream();
    let block = wrap!("w");
    give!(a = 1);
    gv.finish().unwrap();
    drop(block);
    block_on(async {
        let mut groups = stream.group_wrap("w");
        let group = groups.next().await.unwrap();
        assert_eq!(group.key::<i64>("a").collect::<Vec<_>>().await, vec![1]);
        assert!(groups.next().await.is_none());
    });
}

#[test]
fn group_wrap_a_dropped_group_does_not_block_the_others() {
    let gv = given();
    let counts = gv.spawn(
        gv.stream()
            .group_wrap("w")
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .then(|(_, g)| g.count())
            .collect::<Vec<_>>(),
    );
    for n in 0..4u64 {
        let _w = wrap!("w");
        for _ in 0..n {
            give!(x = 1);
        }
    }
    gv.finish().unwrap();
    assert_eq!(counts.join().unwrap(), vec![1, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_wrap_groups_consumed_concurrently_on_tasks() {
    let gv = given();
    let stream = gv.stream();
    let pipeline = tokio::spawn(async move {
        let tasks: Vec<_> = stream
            .group_wrap("w")
            .map(|g| tokio::spawn(g.key::<u64>("x").sum()))
            .collect()
            .await;
        let mut sums = Vec::new();
        for task in tasks {
            sums.push(task.await.unwrap());
        }
        sums
    });
    let producer = std::thread::spawn({
        let handle = gv.handle();
        move || {
            let _in = handle.enter();
            for block in 0..50u64 {
                let _w = wrap!("w");
                for x in 0..=block {
                    give!(x);
                }
            }
        }
    });
    producer.join().unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    gv.finish_async().await.unwrap();
    let sums = pipeline.await.unwrap();
    let expected: Vec<Option<u64>> = (0..50u64).map(|b| Some(b * (b + 1) / 2)).collect();
    assert_eq!(sums, expected);
}

#[test]
fn wmap_pairs_begin_and_end_of_nested_blocks() {
    // Python giving's example: the inner block ends first.
    let gv = given();
    let results = gv.spawn(
        gv.stream()
            .wmap(
                "block",
                |begin| begin.get_as::<i64>("x").unwrap(),
                |x, _end| x * 10,
            )
            .collect::<Vec<_>>(),
    );
    {
        let _a = wrap!("block", x = 3);
        let _b = wrap!("block", x = 4);
        let _c = wrap!("other", x = 5);
    }
    gv.finish().unwrap();
    assert_eq!(results.join().unwrap(), vec![40, 30]);
}

#[test]
fn wmap_receives_the_end_event_and_ignores_unmatched_ends() {
    let gv = given();
    let stream = gv.stream();
    let mut block = wrap!("w", n = 1);
    block.set("result", 42);
    drop(block);
    gv.finish().unwrap();
    let all = run(stream);
    // Only the end event: its begin was not seen.
    let orphan = events(vec![all[1].clone()]).wmap("w", |_| (), |(), _| 0);
    assert!(run(orphan).is_empty());
    let paired = events(all).wmap(
        "w",
        |b| b.get_as::<i64>("n").unwrap(),
        |n, end| n + end.get_as::<i64>("result").unwrap(),
    );
    assert_eq!(run(paired), vec![43]);
}

#[test]
fn merging_operators_on_given_events() {
    let gv = given();
    let steps = gv.spawn(
        gv.stream()
            .collect_between("begin", "end")
            .format("{begin}:{loss}:{end}")
            .unwrap()
            .collect::<Vec<_>>(),
    );
    let best = gv.spawn(
        gv.stream()
            .where_(["loss"])
            .affix_with("best", |s| s.key::<f64>("loss").min_scan())
            .key::<f64>("best")
            .collect::<Vec<_>>(),
    );
    let state = gv.spawn(gv.stream().kscan().last());
    let samples = gv.spawn(
        gv.stream()
            .where_(["per_sample"])
            .kflatten("per_sample")
            .sole::<f64>()
            .count(),
    );
    let tags = gv.spawn(
        gv.stream()
            .tag_group("tests-given")
            .where_([TAG_WORD])
            .count(),
    );
    for (step, loss) in [(0u64, 0.5), (1, 0.7), (2, 0.25)] {
        give!(begin = step);
        give!(loss);
        give!(per_sample = vec![loss, loss]);
        give!(end = step);
    }
    gv.finish().unwrap();
    assert_eq!(
        steps.join().unwrap(),
        vec!["0:0.5:0", "1:0.7:1", "2:0.25:2"]
    );
    assert_eq!(best.join().unwrap(), vec![0.5, 0.5, 0.25]);
    assert_eq!(
        state.join().unwrap().unwrap().to_string(),
        "begin=2 loss=0.25 per_sample=[0.25, 0.25] end=2"
    );
    assert_eq!(samples.join().unwrap(), 6);
    assert_eq!(tags.join().unwrap(), 12);
}

#[test]
fn kgroup_by_splits_by_the_value_of_a_key() {
    let stream = events(vec![
        event!(mode = "train", x = 1),
        event!(x = 0),
        event!(mode = "test", x = 2),
        event!(mode = "train", x = 3),
        event!(mode = 1u64, x = 4),
    ]);
    block_on(async {
        let groups: Vec<_> = stream.kgroup_by("mode").collect().await;
        let mut out = Vec::new();
        for (mode, group) in groups {
            out.push((mode, group.key::<i64>("x").collect::<Vec<_>>().await));
        }
        assert_eq!(
            out,
            vec![
                (Value::from("train"), vec![1, 3]),
                (Value::from("test"), vec![2]),
                (Value::U64(1), vec![4]),
            ]
        );
    });
    assert!(run(none().kgroup_by("mode")).is_empty());
}

#[test]
fn kgroup_by_groups_consumed_concurrently_through_a_scope() {
    let gv = given();
    let stream = gv.stream();
    let sums = gv.spawn(async move {
        let mut groups = stream.kgroup_by("worker");
        let mut tasks = Vec::new();
        while let Some((worker, group)) = groups.next().await {
            let sum = tokio::spawn(group.key::<u64>("x").sum());
            tasks.push((worker.to_string(), sum));
        }
        let mut sums = Vec::new();
        for (worker, sum) in tasks {
            sums.push((worker, sum.await.unwrap()));
        }
        sums
    });
    for x in 0..10u64 {
        let worker = x % 3;
        give!(worker, x);
    }
    gv.finish().unwrap();
    assert_eq!(
        sums.join().unwrap(),
        vec![
            ("0".into(), Some(18)),
            ("1".into(), Some(12)),
            ("2".into(), Some(15))
        ]
    );
}

#[test]
fn where_eq_matches_iterate_steps_once_per_epoch() {
    let gv = given();
    let fifth = gv.spawn(gv.stream().where_eq("step", 5).collect::<Vec<_>>());
    for _epoch in 0..3 {
        for _batch in giving::iterate("train", 0..8) {}
    }
    gv.finish().unwrap();
    let fifth = fifth.join().unwrap();
    assert_eq!(fifth.len(), 3, "one step 5 per epoch: {fifth:?}");
    assert!(fifth.iter().all(|e| e.get_as::<u64>("step").unwrap() == 5));
}

#[test]
fn numbers_compare_numerically_in_conditions() {
    let events = vec![
        giving::event!(x = 4i64),
        giving::event!(x = 4u64),
        giving::event!(x = 4.0),
        giving::event!(x = 4.5),
        giving::event!(x = "4"),
    ];
    let matched: Vec<Event> = block_on(
        futures::stream::iter(events.clone())
            .where_eq("x", 4.0)
            .collect(),
    );
    assert_eq!(matched.len(), 3);
    let matched: Vec<Event> = block_on(
        futures::stream::iter(events)
            .where_eq("x", 4usize)
            .collect(),
    );
    assert_eq!(matched.len(), 3);
}

#[test]
fn distinct_values_treat_equal_numbers_as_one() {
    let values = vec![
        Value::I64(4),
        Value::F64(4.0),
        Value::U64(4),
        Value::F64(4.5),
        Value::from("4"),
        Value::I64(-1),
    ];
    let distinct: Vec<Value> = block_on(futures::stream::iter(values.clone()).distinct().collect());
    assert_eq!(
        distinct,
        vec![
            Value::I64(4),
            Value::F64(4.5),
            Value::from("4"),
            Value::I64(-1)
        ]
    );
    let changed: Vec<Value> = block_on(
        futures::stream::iter(values)
            .distinct_until_changed()
            .collect(),
    );
    assert_eq!(changed.len(), 4);
}

#[test]
fn keyed_streams_are_fused_and_debuggable() {
    use futures::stream::FusedStream;
    let gv = given();
    let mut stream = gv.stream().where_(["x"]).kflatten("x");
    giving::give!(x = vec![1, 2]);
    gv.finish().unwrap();
    assert!(!stream.is_terminated());
    let items: Vec<Event> = block_on(futures::StreamExt::by_ref(&mut stream).collect());
    assert_eq!(items.len(), 2);
    assert!(stream.is_terminated(), "ended streams say so");
    let shown = format!("{stream:?}");
    assert!(
        shown.contains("KFlatten") && shown.contains("Keyed"),
        "{shown}"
    );
}
