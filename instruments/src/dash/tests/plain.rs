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
