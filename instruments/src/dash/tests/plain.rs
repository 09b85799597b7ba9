//! The plain line printed off a terminal.

use super::*;

#[test]
fn plain_line_is_compact() {
    let mut state = DashState::new(Vec::<String>::new());
    script(&mut state, 200, 100);
    assert_eq!(
        plain_line(&state),
        "train 50% 100/200 epoch 1 loss=0.020 rate=3.1k items/s eta 0:01"
    );
    state.set_lag(7, 0);
    assert!(plain_line(&state).ends_with("dropped=7"));
    assert_eq!(plain_line(&DashState::new(["x"])), "0 events");
}

#[test]
fn plain_line_shows_a_voir_benchmarks_phase() {
    let mut state = DashState::new(Vec::<String>::new());
    let event = |fields: [(&'static str, Value); 2]| Event::new_at(fields, at(0));
    state.observe(&event([
        ("bench", Value::from("py.D0")),
        ("phase", Value::from("run_script")),
    ]));
    state.observe(&event([
        ("bench", Value::from("py.D0")),
        ("rate", Value::F64(1200.0)),
    ]));
    assert_eq!(
        plain_line(&state),
        "2 events rate=1.2k | py.D0 [run_script] rate=1.2k"
    );
}
