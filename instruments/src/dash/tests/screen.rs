//! What the whole screen shows, by substring: every panel from scripted events.

use super::*;

/// What was `render_dash`'s doc example while it was public.
#[test]
fn a_loss_is_shown() {
    let mut state = DashState::new(Vec::<String>::new());
    state.observe(&Event::new_at(
        [("loss", Value::from(0.25))],
        Timestamp::from_nanos(1),
    ));
    assert!(shows(&screen(&state, 100, 30), "loss = 0.250"));
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
        plain_line(&state),
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
    let plain = plain_line(&state);
    assert!(
        plain.contains("| mlp.D0 2/3 rate=1.2k | cnn.D0 2/3 rate=300")
            && plain.ends_with("| total rate=1.5k items/s"),
        "{plain}"
    );
}

#[test]
fn a_model_watch_shows_a_row_per_parameter_and_stays_out_of_the_keys() {
    let mut state = DashState::new(Vec::<String>::new());
    let watched = |param: &str, watch: &str, key: &'static str, x: f64, nans: f64| {
        Event::builder()
            .field("global_step", 100u64)
            .field("param", param)
            .field("watch", watch)
            .field(key, x)
            .field("nans", nans)
            .build()
    };
    state.observe(&watched("layers.0.weight", "weight", "norm", 12.5, 0.0));
    state.observe(&watched("layers.0.weight", "grad", "norm", 0.0312, 0.0));
    state.observe(&watched("layers.1.bias", "grad", "norm", 1.0, 7.0));
    state.observe(&Event::builder().field("loss", 0.5).build());
    let lines = screen(&state, 120, 40);
    let all = lines.join("\n");
    assert!(
        shows(&lines, "model watch (2 parameters, step 100)"),
        "{all}"
    );
    let row = lines
        .iter()
        .find(|l| l.contains("layers.0.weight"))
        .expect(&all);
    assert!(row.contains("12.50") && row.contains("0.031"), "{row}");
    let row = lines
        .iter()
        .find(|l| l.contains("layers.1.bias"))
        .expect(&all);
    assert!(row.trim_end_matches('│').trim_end().ends_with('7'), "{row}");
    // The statistics are the table's, not the keys': `norm` is no key, `loss` is.
    assert!(state.key("norm").is_none() && state.key("loss").is_some());
}
