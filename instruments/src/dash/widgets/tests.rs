//! Each panel rendered into a buffer and compared cell for cell, styles included, with the
//! buffer it must equal (ratatui's way of testing a widget).

use std::time::Duration;

use giving::{Event, Timestamp, Value};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

use super::charts::KeyChart;
use super::*;
use crate::dash::model::DashState;
use crate::dash::view::Dashboard;

/// `widget` drawn into an empty `width` × `height` buffer.
fn render(widget: impl Widget, width: u16, height: u16) -> Buffer {
    let mut buffer = Buffer::empty(Rect::new(0, 0, width, height));
    widget.render(buffer.area, &mut buffer);
    buffer
}

/// One row of `width` cells: `text`, then spaces.
fn row(text: &str, width: usize) -> String {
    format!("{text:<width$}")
}

/// A time `secs` seconds into the run.
fn at(secs: u64) -> Timestamp {
    Timestamp::from_nanos(1_000_000_000).plus(Duration::from_secs(secs))
}

/// A map value of `pairs`.
fn map(pairs: &[(&str, Value)]) -> Value {
    Value::Map(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

/// A run of 2 epochs of 2 steps charting `loss` and `lr`: the first epoch's `train` task half
/// done at 10 s (one step, a rate of 1500 items/s), two global steps done at 20 s (losses 0.5
/// and 0.25, lr 0 once), the subscription 5 events behind with 2 dropped.
fn half_run() -> DashState {
    let mut state = DashState::new(["lr"]);
    let events = [
        Event::new_at(
            [
                ("epoch", Value::from(0u64)),
                ("epochs", Value::from(2u64)),
                ("total_steps", Value::from(4u64)),
            ],
            at(0),
        ),
        Event::new_at(
            [
                ("task", Value::from("train")),
                ("progress", Value::from((0u64, 2u64))),
            ],
            at(0),
        ),
        Event::new_at(
            [
                ("task", Value::from("train")),
                ("progress", Value::from((1u64, 2u64))),
            ],
            at(10),
        ),
        Event::new_at(
            [
                ("global_step", Value::from(0u64)),
                ("loss", Value::from(0.5)),
                ("lr", Value::from(0.0)),
            ],
            at(10),
        ),
        Event::new_at(
            [
                ("task", Value::from("train")),
                ("rate", Value::from(1500.0)),
                ("units", Value::from("items/s")),
            ],
            at(10),
        ),
        Event::new_at(
            [
                ("global_step", Value::from(1u64)),
                ("loss", Value::from(0.25)),
            ],
            at(20),
        ),
    ];
    for event in &events {
        state.observe(event);
    }
    state.set_lag(2, 5);
    state
}

/// Two GPUs (the second without memory or temperature) and the machine's and process's
/// figures.
fn monitored() -> DashState {
    let mut state = DashState::new(Vec::<String>::new());
    let memory = |used, total| Value::List(vec![Value::F64(used), Value::F64(total)]);
    let gpu0 = map(&[
        ("load", Value::F64(0.75)),
        ("memory", memory(2048.0, 81920.0)),
        ("temperature", Value::F64(61.0)),
        ("power", Value::Null),
    ]);
    let gpu1 = map(&[("load", Value::F64(0.5)), ("power", Value::F64(250.4))]);
    let gpudata = map(&[("0", gpu0), ("1", gpu1)]);
    state.observe(&Event::new_at([("gpudata", gpudata)], at(0)));
    let cpudata = map(&[
        ("load", Value::F64(0.5)),
        ("memory", memory(4000.0, 16000.0)),
    ]);
    let process = map(&[("rss_mb", Value::F64(321.0)), ("cpu", Value::F64(180.0))]);
    state.observe(&Event::new_at(
        [("cpudata", cpudata), ("process", process)],
        at(0),
    ));
    state
}

#[test]
fn header_says_whether_the_run_is_over_and_the_lag() {
    let mut state = half_run();
    let reversed = Style::new().add_modifier(Modifier::REVERSED);
    let header = |status: &str| {
        let text = format!(
            " giving dash   {status}  events 6  lag: pending 5 dropped 2  [q] stop  [l] log scale"
        );
        let mut expected = Buffer::with_lines([row(&text, 110)]);
        expected.set_style(Rect::new(0, 0, 13, 1), reversed);
        expected
    };
    assert_eq!(render(Header::new(&state), 110, 1), header("running"));
    state.finish();
    assert_eq!(render(Header::new(&state), 110, 1), header("finished"));
    state.set_waiting_for_key(true);
    assert_eq!(
        render(Header::new(&state), 110, 1),
        header("finished: press any key to close")
    );
}

#[test]
fn progress_shows_the_whole_run_then_each_task() {
    let state = half_run();
    let progress = Progress::new(&state);
    assert_eq!(progress.height(), 6);
    let mut expected = Buffer::with_lines([
        "┌ progress ──────────────────────────────────────────────────────────┐",
        "│run          epoch 1/2  steps 2/4  eta 0:20                         │",
        "│ 50% ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━│",
        "│train        1/2  eta 0:10  rate 1.5k items/s  mean 1.5k items/s    │",
        "│ 50% ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━│",
        "└────────────────────────────────────────────────────────────────────┘",
    ]);
    // Half of the 63 cells after the label are filled: the run's in magenta, the task's green.
    expected.set_style(Rect::new(6, 2, 31, 1), Style::new().fg(Color::Magenta));
    expected.set_style(Rect::new(6, 4, 31, 1), Style::new().fg(Color::Green));
    assert_eq!(render(progress, 70, 6), expected);
}

#[test]
fn progress_waits_for_its_first_event() {
    let state = DashState::new(Vec::<String>::new());
    let progress = Progress::new(&state);
    assert_eq!(progress.height(), 4);
    let expected = Buffer::with_lines([
        "┌ progress ────────────────────────────┐",
        "│waiting for progress events…          │",
        "│                                      │",
        "└──────────────────────────────────────┘",
    ]);
    assert_eq!(render(progress, 40, 4), expected);
}

#[test]
fn progress_shows_the_tasks_that_fit() {
    let mut state = DashState::new(Vec::<String>::new());
    for task in ["train", "valid", "test"] {
        state.observe(&Event::new_at(
            [
                ("task", Value::from(task)),
                ("progress", Value::from((1u64, 4u64))),
            ],
            at(0),
        ));
    }
    assert_eq!(Progress::new(&state).height(), 8);
    let mut expected = Buffer::with_lines([
        "┌ progress ──────────────────┐",
        "│train        1/4  eta 0:00  │",
        "│ 25% ━━━━━━━━━━━━━━━━━━━━━━━│",
        "│valid        1/4  eta 0:00  │",
        "│ 25% ━━━━━━━━━━━━━━━━━━━━━━━│",
        "└────────────────────────────┘",
    ]);
    let green = Style::new().fg(Color::Green);
    expected.set_style(Rect::new(6, 2, 5, 1), green);
    expected.set_style(Rect::new(6, 4, 5, 1), green);
    assert_eq!(render(Progress::new(&state), 30, 6), expected);
}

#[test]
fn a_voir_benchmarks_row_shows_its_phase() {
    let mut state = DashState::new(Vec::<String>::new());
    let phase = [
        ("bench", Value::from("py.D0")),
        ("phase", Value::from("run_script")),
    ];
    state.observe(&Event::new_at(phase, at(0)));
    let table = SourcesTable::new(&state);
    assert_eq!(table.height(), 4);
    let mut expected = Buffer::with_lines([
        "┌ sources (1) ───────────────────────────────────────────────────────────────────────────┐",
        "│source                     stop     progress     rate               loss       events   │",
        "│py.D0 [run_script]                               -                  -          1        │",
        "└────────────────────────────────────────────────────────────────────────────────────────┘",
    ]);
    expected.set_style(
        Rect::new(1, 1, 88, 1),
        Style::new().add_modifier(Modifier::UNDERLINED),
    );
    assert_eq!(render(table, 90, 4), expected);
}

#[test]
fn sources_table_has_a_row_per_source_and_their_total() {
    let mut state = DashState::new(Vec::<String>::new());
    for (bench, rate) in [("mlp.D0", 1200.0), ("cnn.D0", 300.0)] {
        let stop = [
            ("bench", Value::from(bench)),
            ("task", Value::from("early_stop")),
            ("progress", Value::from((2u64, 3u64))),
        ];
        state.observe(&Event::new_at(stop, at(0)));
        let rate = [
            ("bench", Value::from(bench)),
            ("rate", Value::F64(rate)),
            ("units", Value::from("items/s")),
            ("loss", Value::F64(0.5)),
        ];
        state.observe(&Event::new_at(rate, at(0)));
    }
    // A rank that is done: in the table, out of the total.
    let done = [
        ("rank", Value::from(3u64)),
        ("host", Value::from("node2")),
        ("task", Value::from("train")),
        ("progress", Value::from((5u64, 10u64))),
        ("done", Value::Bool(true)),
    ];
    state.observe(&Event::new_at(done, at(5)));
    let table = SourcesTable::new(&state);
    assert_eq!(table.height(), 7);
    let mut expected = Buffer::with_lines([
        "┌ sources (3) ───────────────────────────────────────────────────────────────────────────┐",
        "│source                     stop     progress     rate               loss       events   │",
        "│mlp.D0                     2/3                   1.2k items/s       0.500      2        │",
        "│cnn.D0                     2/3                   300 items/s        0.500      2        │",
        "│rank 3 @ node2 (done)               5/10         -                  -          1        │",
        "│total                                            1.5k items/s                           │",
        "└────────────────────────────────────────────────────────────────────────────────────────┘",
    ]);
    expected.set_style(
        Rect::new(1, 1, 88, 1),
        Style::new().add_modifier(Modifier::UNDERLINED),
    );
    expected.set_style(
        Rect::new(1, 5, 88, 1),
        Style::new().add_modifier(Modifier::BOLD),
    );
    assert_eq!(render(table, 90, 7), expected);
    assert_eq!(
        SourcesTable::new(&DashState::new(Vec::<String>::new())).height(),
        0
    );
}

#[test]
fn stderr_panel_shows_the_latest_lines_in_red() {
    let mut state = DashState::new(Vec::<String>::new());
    assert_eq!(StderrPanel::new(&state).height(), 0);
    for i in 0..7 {
        state.stderr_line(format!("warning {i}"));
    }
    let panel = StderrPanel::new(&state);
    assert_eq!(panel.height(), 7);
    let mut expected = Buffer::with_lines([
        "┌ stderr (7 lines) ──────────┐",
        "│warning 2                   │",
        "│warning 3                   │",
        "│warning 4                   │",
        "│warning 5                   │",
        "│warning 6                   │",
        "└────────────────────────────┘",
    ]);
    // The border (title included) is red; the lines are not.
    expected.set_style(Rect::new(0, 0, 30, 7), Style::new().fg(Color::Red));
    expected.set_style(Rect::new(1, 1, 28, 5), Style::new().fg(Color::Reset));
    assert_eq!(render(panel, 30, 7), expected);
}

#[test]
fn keys_table_lists_every_key_with_its_latest_value_units_and_count() {
    let state = half_run();
    let mut expected = Buffer::with_lines([
        "┌ keys ────────────────────────────────────────────────────┐",
        "│key               latest             units      events    │",
        "│epoch             0                             1         │",
        "│epochs            2                             1         │",
        "│global_step       1                             2         │",
        "│loss              0.250                         2         │",
        "│lr                0.000                         1         │",
        "│progress          [1, 2]                        2         │",
        "│rate              1500               items/s    1         │",
        "└──────────────────────────────────────────────────────────┘",
    ]);
    expected.set_style(Rect::new(1, 1, 58, 1), Style::new().fg(Color::Yellow));
    assert_eq!(render(KeysTable::new(&state), 60, 10), expected);
}

#[test]
fn gpu_panel_has_a_line_per_gpu() {
    let expected = Buffer::with_lines([
        "┌ GPU ─────────────────────────────────────────────────────────┐",
        "│gpu 0: load 75%  mem 2048/81920 MB  temp 61°C  power -        │",
        "│gpu 1: load 50%  mem -  temp -  power 250 W                   │",
        "└──────────────────────────────────────────────────────────────┘",
    ]);
    assert_eq!(render(GpuPanel::new(&monitored()), 64, 4), expected);
    let expected = Buffer::with_lines([
        "┌ GPU ───────────────────────┐",
        "│no gpudata (--gpu-poll)     │",
        "└────────────────────────────┘",
    ]);
    assert_eq!(render(GpuPanel::new(&half_run()), 30, 3), expected);
}

#[test]
fn cpu_panel_has_the_machine_then_the_process() {
    let expected = Buffer::with_lines([
        "┌ CPU ─────────────────────────────────┐",
        "│load 50%  mem 4000/16000 MB           │",
        "│process: cpu 180%  rss 321 MB         │",
        "└──────────────────────────────────────┘",
    ]);
    assert_eq!(render(CpuPanel::new(&monitored()), 40, 4), expected);
    let expected = Buffer::with_lines([
        "┌ CPU ───────────────────────┐",
        "│no cpudata (--cpu-poll)     │",
        "└────────────────────────────┘",
    ]);
    assert_eq!(render(CpuPanel::new(&half_run()), 30, 3), expected);
}

#[test]
fn a_chart_draws_its_points_between_padded_bounds() {
    let state = half_run();
    // 0.5 then 0.25: the y axis runs 5% beyond each end, the x axis over the steps.
    let mut expected = Buffer::with_lines([
        "┌ loss = 0.250 ──────────────┐",
        "│0.512│⠉⠒⠢⠤⣀⡀                │",
        "│     │     ⠈⠉⠒⠢⠤⣀⣀          │",
        "│     │            ⠉⠑⠒⠤⢄⣀    │",
        "│0.237│                  ⠉⠑⠒⠤│",
        "│     └──────────────────────│",
        "│     0                     1│",
        "└────────────────────────────┘",
    ]);
    let cyan = Style::new().fg(Color::Cyan);
    for (x, y, width) in [(7, 1, 6), (12, 2, 7), (19, 3, 6), (25, 4, 4)] {
        expected.set_style(Rect::new(x, y, width, 1), cyan);
    }
    assert_eq!(render(KeyChart::new(&state, "loss"), 30, 8), expected);
}

#[test]
fn a_chart_on_a_log_scale_labels_its_axis_with_values() {
    let mut state = half_run();
    state.toggle_log_scale();
    // log10 0.5 and 0.25 padded by 5%: 10^-0.286 = 0.518 and 10^-0.617 = 0.241.
    let mut expected = Buffer::with_lines([
        "┌ loss = 0.250 (log scale) ──┐",
        "│0.518│⠉⠒⠢⠤⣀⡀                │",
        "│     │     ⠈⠉⠒⠢⠤⣀⣀          │",
        "│     │            ⠉⠑⠒⠤⢄⣀    │",
        "│0.241│                  ⠉⠑⠒⠤│",
        "│     └──────────────────────│",
        "│     0                     1│",
        "└────────────────────────────┘",
    ]);
    let cyan = Style::new().fg(Color::Cyan);
    for (x, y, width) in [(7, 1, 6), (12, 2, 7), (19, 3, 6), (25, 4, 4)] {
        expected.set_style(Rect::new(x, y, width, 1), cyan);
    }
    assert_eq!(render(KeyChart::new(&state, "loss"), 30, 8), expected);
    // lr was only ever 0: nothing to put on a log scale.
    let expected = Buffer::with_lines([
        "┌ lr = 0.000 (log scale) ────────────────────────┐",
        "│no positive lr to show on a log scale           │",
        "└────────────────────────────────────────────────┘",
    ]);
    assert_eq!(render(KeyChart::new(&state, "lr"), 50, 3), expected);
}

#[test]
fn a_chart_without_points_says_so() {
    let expected = Buffer::with_lines([
        "┌ acc ─────────────┐",
        "│no acc yet        │",
        "└──────────────────┘",
    ]);
    assert_eq!(render(KeyChart::new(&half_run(), "acc"), 20, 3), expected);
}

#[test]
fn charts_are_stacked_loss_first() {
    let state = half_run();
    // lr's single point at 0 gets a band of ±1, kept at or above zero.
    let mut expected = Buffer::with_lines([
        "┌ loss = 0.250 ──────────────┐",
        "│0.512│⠉⠉⠒⠒⠒⠢⠤⠤⠤⣀⣀⣀⣀         │",
        "│0.237│             ⠉⠉⠉⠑⠒⠒⠒⠤⠤│",
        "│     └──────────────────────│",
        "│     0                     1│",
        "└────────────────────────────┘",
        "┌ lr = 0.000 ────────────────┐",
        "│1.000│                      │",
        "│0.000│⡀                     │",
        "│     └──────────────────────│",
        "│     0                     1│",
        "└────────────────────────────┘",
    ]);
    let cyan = Style::new().fg(Color::Cyan);
    for (x, y, width) in [(7, 1, 13), (20, 2, 9), (7, 8, 1)] {
        expected.set_style(Rect::new(x, y, width, 1), cyan);
    }
    assert_eq!(render(Charts::new(&state), 30, 12), expected);
}

#[test]
fn the_dashboard_lays_out_only_the_panels_it_has() {
    let state = DashState::new(Vec::<String>::new());
    // No sources, monitors or stderr lines yet: header, progress, then the chart and keys.
    let mut expected = Buffer::with_lines([
        " giving dash   running  events 0  lag: pending 0 dropped 0  ",
        "┌ progress ────────────────────────────────────────────────┐",
        "│waiting for progress events…                              │",
        "│                                                          │",
        "└──────────────────────────────────────────────────────────┘",
        "┌ loss ────────────────────────────┐┌ keys ────────────────┐",
        "│no loss yet                       ││key    latest uni even│",
        "│                                  ││                      │",
        "│                                  ││                      │",
        "│                                  ││                      │",
        "│                                  ││                      │",
        "│                                  ││                      │",
        "│                                  ││                      │",
        "└──────────────────────────────────┘└──────────────────────┘",
    ]);
    expected.set_style(
        Rect::new(0, 0, 13, 1),
        Style::new().add_modifier(Modifier::REVERSED),
    );
    expected.set_style(Rect::new(37, 6, 22, 1), Style::new().fg(Color::Yellow));
    assert_eq!(render(Dashboard::new(&state), 60, 14), expected);
}
