//! The dashboard's state and drawing, for scripted events: no terminal, no sleeps, no clock.

use std::collections::BTreeMap;
use std::time::Duration;

use giving::{Event, Timestamp, Value};
use giving_instruments::{Dash, DashMode, DashState, Overseer, render_dash};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn at(ms: u64) -> Timestamp {
    Timestamp::from_nanos(1_000_000_000).plus(Duration::from_millis(ms))
}

/// A training task of `n` steps of 32 items, 10 ms each, with a loss and a rate every 10 steps.
fn script(state: &mut DashState, n: u64, done: u64) {
    state.observe(
        &Event::builder()
            .field("task", "train")
            .field("progress", (0u64, n))
            .time(at(0))
            .build(),
    );
    for step in 0..done {
        let t = at(10 * (step + 1));
        state.observe(
            &Event::builder()
                .field("task", "train")
                .field("step", step)
                .field("batch", 32u64)
                .field("progress", (step + 1, n))
                .time(t)
                .build(),
        );
        let loss = 2.0 / (step as f64 + 1.0);
        state.observe(
            &Event::builder()
                .field("epoch", 0u64)
                .field("global_step", step)
                .field("loss", loss)
                .field("lr", 0.01 * (1.0 - step as f64 / n as f64))
                .time(t)
                .build(),
        );
        if (step + 1) % 10 == 0 {
            state.observe(
                &Event::builder()
                    .field("task", "train")
                    .field("rate", 3000.0 + step as f64)
                    .field("units", "items/s")
                    .time(t)
                    .build(),
            );
        }
    }
}

fn monitors(state: &mut DashState) {
    let mut gpu = BTreeMap::new();
    gpu.insert("load".to_owned(), Value::F64(0.75));
    gpu.insert(
        "memory".to_owned(),
        Value::List(vec![Value::F64(2048.0), Value::F64(81920.0)]),
    );
    gpu.insert("temperature".to_owned(), Value::F64(61.0));
    gpu.insert("power".to_owned(), Value::Null);
    let mut gpus = BTreeMap::new();
    gpus.insert("0".to_owned(), Value::Map(gpu));
    state.observe(
        &Event::builder()
            .field("gpudata", Value::Map(gpus))
            .time(at(500))
            .build(),
    );
    let mut cpu = BTreeMap::new();
    cpu.insert("load".to_owned(), Value::F64(0.5));
    cpu.insert(
        "memory".to_owned(),
        Value::List(vec![Value::F64(4000.0), Value::F64(16000.0)]),
    );
    let mut process = BTreeMap::new();
    process.insert("pid".to_owned(), Value::U64(42));
    process.insert("rss_mb".to_owned(), Value::F64(321.0));
    process.insert("cpu".to_owned(), Value::F64(180.0));
    state.observe(
        &Event::builder()
            .field("cpudata", Value::Map(cpu))
            .field("process", Value::Map(process))
            .time(at(500))
            .build(),
    );
}

fn screen(state: &DashState, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| render_dash(frame, state)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect()
}

fn shows(lines: &[String], text: &str) -> bool {
    lines.iter().any(|line| line.contains(text))
}

#[test]
fn state_aggregates_progress_rates_keys_and_series() {
    let mut state = DashState::new(["lr"]);
    script(&mut state, 200, 100);
    let task = &state.tasks()[0];
    assert_eq!(task.name, "train");
    assert_eq!(task.progress, Some((100, 200)));
    assert_eq!(task.ratio(), 0.5);
    // 100 steps in 1 s: 100 left take 1 s more.
    assert_eq!(task.eta(), Some(Duration::from_secs(1)));
    assert_eq!(task.rate, Some(3099.0));
    assert_eq!(task.mean_rate(), Some(3054.0)); // the mean of 3009, 3019, …, 3099
    assert_eq!(task.units.as_deref(), Some("items/s"));
    assert_eq!(state.key("loss").unwrap().count, 100);
    assert_eq!(state.key("rate").unwrap().units.as_deref(), Some("items/s"));
    assert_eq!(state.key("task").unwrap().units, None);
    let loss = state.series("loss").unwrap();
    assert_eq!(loss.points.len(), 100);
    assert_eq!(loss.points[0], (0.0, 2.0));
    assert_eq!(loss.points[99], (99.0, 0.02));
    assert_eq!(state.series("lr").unwrap().points.len(), 100);
    assert_eq!(state.events(), 1 + 100 + 100 + 10);
}

#[test]
fn plain_line_is_compact() {
    let mut state = DashState::new(Vec::<String>::new());
    script(&mut state, 200, 100);
    assert_eq!(
        state.plain_line(),
        "train 50% 100/200 epoch 1 loss=0.020 rate=3.1k items/s eta 0:01"
    );
    state.set_lag(7, 0);
    assert!(state.plain_line().ends_with("dropped=7"));
    assert_eq!(DashState::new(["x"]).plain_line(), "0 events");
}

#[test]
fn renders_values_progress_and_chart() {
    let mut state = DashState::new(["lr"]);
    script(&mut state, 200, 100);
    state.set_lag(3, 5);
    let lines = screen(&state, 120, 40);
    let all = lines.join("\n");
    // Header: events and the subscription's lag.
    assert!(shows(&lines, "events 211"), "{all}");
    assert!(shows(&lines, "pending 5 dropped 3"), "{all}");
    // Progress: i/n, ETA, rates, percentage.
    assert!(shows(&lines, "train"), "{all}");
    assert!(shows(&lines, "100/200"), "{all}");
    assert!(shows(&lines, "eta 0:01"), "{all}");
    assert!(shows(&lines, "rate 3.1k items/s"), "{all}");
    assert!(shows(&lines, "mean 3.1k items/s"), "{all}");
    assert!(shows(&lines, " 50%"), "{all}");
    // Keys: latest values, units and counts.
    assert!(shows(&lines, "keys"), "{all}");
    let loss_row = lines
        .iter()
        .find(|l| l.contains("│loss") || l.contains("│ loss") || l.contains("loss   "))
        .expect(&all);
    assert!(
        loss_row.contains("0.020") && loss_row.contains("100"),
        "{all}"
    );
    let rate_row = lines.iter().find(|l| l.contains("3099")).expect(&all);
    assert!(
        rate_row.contains("items/s") && rate_row.contains("10"),
        "{all}"
    );
    // Charts: loss (with its latest value and y range) and lr, drawn in braille.
    assert!(shows(&lines, "loss = 0.020"), "{all}");
    assert!(shows(&lines, " lr = "), "{all}");
    // The x axis ends at the last step, labelled as the whole number it is.
    assert!(shows(&lines, "99"), "{all}");
    assert!(!shows(&lines, "99.0"), "{all}");
    let braille = all
        .chars()
        .filter(|c| ('\u{2801}'..='\u{28ff}').contains(c))
        .count();
    assert!(braille > 20, "{all}");
}

#[test]
fn renders_gpu_and_cpu_panels() {
    let mut state = DashState::new(Vec::<String>::new());
    script(&mut state, 50, 5);
    monitors(&mut state);
    let lines = screen(&state, 120, 40);
    let all = lines.join("\n");
    assert!(shows(&lines, "GPU"), "{all}");
    assert!(
        shows(
            &lines,
            "gpu 0: load 75%  mem 2048/81920 MB  temp 61°C  power -"
        ),
        "{all}"
    );
    assert!(shows(&lines, "load 50%  mem 4000/16000 MB"), "{all}");
    assert!(shows(&lines, "process: cpu 180%  rss 321 MB"), "{all}");
    assert_eq!(state.key("gpudata").unwrap().count, 1);
}

#[test]
fn renders_before_any_event_and_in_a_tiny_terminal() {
    let state = DashState::new(["acc"]);
    let lines = screen(&state, 120, 40);
    assert!(shows(&lines, "waiting for progress events"));
    assert!(shows(&lines, "no loss yet"));
    assert!(shows(&lines, "no acc yet"));
    let mut state = DashState::new(["acc"]);
    script(&mut state, 10, 10);
    monitors(&mut state);
    for (w, h) in [(1, 1), (10, 3), (30, 8), (200, 60)] {
        screen(&state, w, h); // nothing panics
    }
}

#[test]
fn any_events_are_shown_as_they_come() {
    let mut state = DashState::new(["score"]);
    let events = [
        Event::new_at([("score", Value::from(f64::NAN))], at(1)),
        Event::new_at([("score", Value::from("high"))], at(2)),
        Event::new_at([("progress", Value::from("half"))], at(3)),
        Event::new_at([("progress", Value::from((-1, 5)))], at(4)),
        Event::new_at([("rate", Value::from(f64::INFINITY))], at(5)),
        Event::new_at([("blob", Value::Bytes(vec![1, 2, 3]))], at(6)),
        Event::new_at([("gpudata", Value::from(3))], at(7)),
        Event::new_at([("cpudata", Value::from("?"))], at(8)),
        Event::new_at(
            [("score", Value::from(7u64)), ("step", Value::from(3))],
            at(9),
        ),
        Event::new_at([("nested", Value::from(vec![vec![1, 2], vec![3]]))], at(10)),
    ];
    for event in &events {
        state.observe(event);
    }
    assert_eq!(state.series("score").unwrap().points, [(3.0, 7.0)]);
    assert_eq!(state.key("score").unwrap().count, 3);
    let lines = screen(&state, 120, 40);
    assert!(shows(&lines, "(3 bytes)"));
    assert!(shows(&lines, "[[1, 2], [3]]"));
}

#[test]
fn long_series_are_thinned_not_unbounded() {
    let mut state = DashState::new(Vec::<String>::new());
    for step in 0..100_000u64 {
        state.observe(&Event::new_at(
            [
                ("global_step", Value::from(step)),
                ("loss", Value::from(1.0)),
            ],
            at(step),
        ));
    }
    let points = &state.series("loss").unwrap().points;
    assert!(points.len() < 2048, "{}", points.len());
    assert_eq!(points[0].0, 0.0);
    assert!(points.last().unwrap().0 > 99_000.0);
}

#[test]
fn a_plain_dash_runs_in_an_overseer() {
    let run = Overseer::new()
        .with(Dash::new().mode(DashMode::Plain).plot("lr"))
        .run(|| {
            for step in giving::iterate("train", 0..50u64) {
                let loss = 1.0 / (step as f64 + 1.0);
                giving::give!(loss);
            }
        });
    assert_eq!(run.exit_code(), 0);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

#[test]
fn a_panicking_loop_still_finishes_the_dash() {
    let run = Overseer::new()
        .with(Dash::new().mode(DashMode::Plain))
        .quiet(true)
        .run(|| {
            giving::give!(loss = 0.5);
            panic!("diverged");
        });
    assert_eq!(run.exit_code(), 101);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

/// Without a terminal, the terminal mode reports and falls back to plain lines: training goes
/// on. (Skipped where a terminal is at hand, so as not to take it over during `cargo test`.)
#[test]
fn without_a_terminal_the_terminal_mode_falls_back() {
    use std::io::IsTerminal;
    let tty = std::fs::File::open("/dev/tty").is_ok()
        || std::io::stdin().is_terminal()
        || std::io::stdout().is_terminal();
    if tty {
        eprintln!("skipped: a terminal is at hand");
        return;
    }
    let run = Overseer::new()
        .with(Dash::new().mode(DashMode::Terminal))
        .run(|| {
            for step in giving::iterate("train", 0..20u64) {
                giving::give!(step);
            }
            7
        });
    assert_eq!(run.output, Ok(7));
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

#[test]
fn dash_and_plot_options_add_the_dashboard_last() {
    use clap::Parser;
    use giving_instruments::InstrumentArgs;

    #[derive(Parser)]
    struct Train {
        #[command(flatten)]
        instruments: InstrumentArgs,
    }

    let args = Train::parse_from(["train", "--dash", "--plot", "lr", "--plot", "acc", "--stop"]);
    assert!(args.instruments.dash.dash);
    assert_eq!(args.instruments.dash.plot, ["lr", "acc"]);
    let instruments = args.instruments.instruments().unwrap();
    let names: Vec<&str> = instruments.iter().map(|i| i.name()).collect();
    assert_eq!(names, ["rate", "early-stop", "dash"]);
    let off = Train::parse_from(["train"])
        .instruments
        .instruments()
        .unwrap();
    assert!(off.iter().all(|i| i.name() != "dash"));
}

/// A loss still on the device: counts how often it is read.
struct DeviceLoss(f64, std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl giving::Resolve for DeviceLoss {
    fn resolve(&self) -> Result<Value, giving::ResolveError> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Value::F64(self.0))
    }
}

#[test]
fn lazy_losses_are_read_sparingly() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reads = Arc::new(AtomicUsize::new(0));
    let mut state = DashState::new(Vec::<String>::new());
    for step in 0..1000u64 {
        let loss = Value::lazy(DeviceLoss(1.0 / (step as f64 + 1.0), reads.clone()));
        state.observe(&Event::new_at(
            [("global_step", Value::from(step)), ("loss", loss)],
            at(step), // 1 ms apart
        ));
    }
    // One read per 50 ms of event time: steps 0, 50, …, 950.
    assert_eq!(reads.load(Ordering::SeqCst), 20);
    let points = &state.series("loss").unwrap().points;
    assert_eq!(points.len(), 20);
    assert_eq!(points[1], (50.0, 1.0 / 51.0));
    assert_eq!(state.key("loss").unwrap().count, 1000);
    // The keys table and the plain line read the latest value only.
    assert!(state.plain_line().contains("loss=0.001"));
    assert_eq!(reads.load(Ordering::SeqCst), 21);

    let reads = Arc::new(AtomicUsize::new(0));
    let mut state = DashState::new(Vec::<String>::new()).read_lazy_every(Duration::ZERO);
    for step in 0..100u64 {
        let loss = Value::lazy(DeviceLoss(0.5, reads.clone()));
        state.observe(&Event::new_at([("loss", loss)], at(step)));
    }
    assert_eq!(reads.load(Ordering::SeqCst), 100);
    assert_eq!(state.series("loss").unwrap().points[99], (99.0, 0.5));
}

/// Two epochs of 100 steps (10 ms each), the run planning both: `{epoch, epochs, total_steps}`
/// at each epoch's start, `{global_step, loss}` every step.
fn two_epochs(state: &mut DashState, done: u64) {
    for global in 0..done {
        let (epoch, step) = (global / 100, global % 100);
        let t = at(10 * global);
        if step == 0 {
            let start = [
                ("epoch", Value::from(epoch)),
                ("epochs", Value::from(2u64)),
                ("total_steps", Value::from(200u64)),
            ];
            state.observe(&Event::new_at(start, t));
            let progress = [
                ("task", Value::from("train")),
                ("progress", Value::from((0u64, 100u64))),
            ];
            state.observe(&Event::new_at(progress, t));
        }
        let t = at(10 * (global + 1));
        let progress = [
            ("task", Value::from("train")),
            ("progress", Value::from((step + 1, 100u64))),
        ];
        state.observe(&Event::new_at(progress, t));
        let loss = [
            ("epoch", Value::from(epoch)),
            ("global_step", Value::from(global)),
            ("loss", Value::from(1.0 / (global as f64 + 1.0))),
        ];
        state.observe(&Event::new_at(loss, t));
    }
}

#[test]
fn the_whole_run_has_its_epoch_progress_and_eta() {
    let mut state = DashState::new(Vec::<String>::new());
    two_epochs(&mut state, 150);
    let run = state.run();
    assert_eq!((run.epoch, run.epochs), (Some(1), Some(2)));
    assert_eq!(run.progress(), Some((150, 200)));
    assert_eq!(run.ratio(), 0.75);
    // 150 steps in 1.5 s: the 50 left take 0.5 s.
    assert_eq!(run.eta(), Some(Duration::from_millis(500)));
    assert_eq!(run.epoch_label().as_deref(), Some("epoch 2/2"));
    // The task's own progress restarted with the epoch: 50 of 100.
    assert_eq!(state.tasks()[0].progress, Some((50, 100)));
    assert_eq!(
        state.plain_line(),
        "train 50% 50/100 epoch 2/2 loss=0.007 eta 0:00 | run 75% eta 0:00"
    );

    let lines = screen(&state, 120, 40);
    let all = lines.join("\n");
    let run_line = lines.iter().find(|l| l.contains("run ")).expect(&all);
    assert!(run_line.contains("epoch 2/2"), "{all}");
    assert!(run_line.contains("steps 150/200"), "{all}");
    assert!(shows(&lines, " 75%"), "{all}");
    assert!(shows(&lines, "50/100"), "{all}");
}

#[test]
fn without_what_the_run_plans_there_is_no_run_progress() {
    let mut state = DashState::new(Vec::<String>::new());
    script(&mut state, 200, 100);
    assert_eq!(state.run().progress(), None);
    assert_eq!(state.run().eta(), None);
    assert!(!state.plain_line().contains("| run"));
}

#[test]
fn charts_switch_to_a_log_scale_and_back() {
    let mut state = DashState::new(Vec::<String>::new());
    two_epochs(&mut state, 100); // loss from 1 down to 0.01
    let linear = screen(&state, 120, 40).join("\n");
    assert!(!linear.contains("log scale)"), "{linear}");
    state.toggle_log_scale();
    assert!(state.log_scale());
    let lines = screen(&state, 120, 40);
    let all = lines.join("\n");
    assert!(shows(&lines, "loss = 0.010 (log scale)"), "{all}");
    // The y axis is labelled with values, not their logarithms: the padded range around
    // 0.01..1 on a log scale ends just above 1 and starts just below 0.01.
    let labels: Vec<&String> = lines.iter().filter(|l| l.contains("1.259")).collect();
    assert!(!labels.is_empty(), "top label 10^(0 + 0.1) = 1.259:\n{all}");
    assert!(
        shows(&lines, "0.008"),
        "bottom label 10^(-2 - 0.1) = 0.0079:\n{all}"
    );
    state.toggle_log_scale();
    assert!(!screen(&state, 120, 40).join("\n").contains("log scale)"));

    // Nothing positive: nothing to draw on a log scale, and it says so.
    let mut flat = DashState::new(Vec::<String>::new());
    flat.observe(&Event::new_at([("loss", Value::from(0.0))], at(0)));
    flat.toggle_log_scale();
    assert!(shows(
        &screen(&flat, 120, 40),
        "no positive loss to show on a log scale"
    ));
}

#[test]
fn stderr_lines_get_a_panel_of_the_latest() {
    let mut state = DashState::new(Vec::<String>::new());
    script(&mut state, 50, 5);
    let quiet = screen(&state, 120, 40).join("\n");
    assert!(
        !quiet.contains("stderr"),
        "no panel without a line:\n{quiet}"
    );
    for i in 0..(DashState::STDERR_LINES as u64 + 20) {
        state.stderr_line(format!("warning number {i}"));
    }
    let (kept, total) = state.stderr();
    assert_eq!((kept.len(), total), (DashState::STDERR_LINES, 120));
    let lines = screen(&state, 120, 40);
    let all = lines.join("\n");
    assert!(shows(&lines, "stderr (120 lines)"), "{all}");
    assert!(shows(&lines, "warning number 119"), "{all}");
    assert!(shows(&lines, "warning number 115"), "the last 5:\n{all}");
    assert!(!shows(&lines, "warning number 114"), "{all}");
}

#[test]
fn a_held_final_screen_says_how_to_close_it() {
    let mut state = DashState::new(Vec::<String>::new());
    script(&mut state, 10, 10);
    state.finish();
    assert!(shows(&screen(&state, 120, 40), "finished  events"));
    state.set_waiting_for_key(true);
    assert!(shows(
        &screen(&state, 120, 40),
        "finished: press any key to close"
    ));
}

#[test]
fn renders_a_row_per_suite_process_and_rank_with_their_total() {
    let mut state = DashState::new(Vec::<String>::new());
    for (i, (source, rate)) in [("mlp.D0", 1200.0), ("cnn.D0", 300.0)].iter().enumerate() {
        state.observe(&Event::new_at(
            [
                ("bench", Value::from(*source)),
                ("task", Value::from("early_stop")),
                ("progress", Value::List(vec![2u64.into(), 3u64.into()])),
            ],
            at(10 * i as u64),
        ));
        state.observe(&Event::new_at(
            [
                ("bench", Value::from(*source)),
                ("rate", Value::F64(*rate)),
                ("units", Value::from("items/s")),
                ("loss", Value::F64(0.5)),
            ],
            at(10 * i as u64 + 5),
        ));
    }
    let lines = screen(&state, 120, 40);
    assert!(shows(&lines, "sources (2)"), "{}", lines.join("\n"));
    let row = lines.iter().find(|l| l.contains("mlp.D0")).unwrap();
    assert!(row.contains("2/3") && row.contains("1.2k items/s"), "{row}");
    let total = lines.iter().find(|l| l.contains("total")).unwrap();
    assert!(total.contains("1.5k items/s"), "{total}");
    let plain = state.plain_line();
    assert!(
        plain.contains("| mlp.D0 2/3 rate=1.2k | cnn.D0 2/3 rate=300")
            && plain.ends_with("| total rate=1.5k items/s"),
        "{plain}"
    );
}
