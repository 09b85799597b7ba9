#!/usr/bin/env bash
# End-to-end test of the dashboard: runs `giving train mlp --dash` in a 120x40 tmux pane,
# checks the captured screen for the panels, presses `q` (then, in a second run, Ctrl-C; in a
# third, sends SIGTERM), then checks that the terminal was
# restored, the exit code is 0 and the MessagePack log (`--log DIR`) reads back with
# `giving log stats FILE`. Before those: `--dash-hold` keeps the final screen until a key (and
# `l` switches to a log scale), and a line written to stderr goes to the panel, then to the
# scrollback once the terminal is back. Needs tmux; uses its own tmux server, so it never touches yours.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v tmux >/dev/null || { echo "tui.sh: tmux is required" >&2; exit 1; }

# The debug build: `cargo test --workspace` has just built it in CI (the release build was
# 12 minutes of CI's 45 from a clean clone), and the panels need a rate, not a fast one.
echo "== tui.sh: cargo build --bin giving"
cargo build --bin giving
target="${CARGO_TARGET_DIR:-target}"
bin="$(cd "$target/debug" && pwd)/giving"

work="$(mktemp -d)"
socket="giving-tui-$$"
tmux_() { tmux -L "$socket" -f /dev/null "$@"; }
cleanup() {
  tmux_ kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "tui.sh: FAIL: $*" >&2
  echo "---- last screen ----" >&2
  tmux_ capture-pane -p -t tui 2>/dev/null >&2 || true
  exit 1
}

dash_run() {
  local key="$1" run="$work/$2" expected="${3:-0}"
  mkdir -p "$run"
  # Many epochs: the run must still be going when `q` is pressed.
  tmux_ new-session -d -s tui -x 120 -y 40 \
    "'$bin' train mlp --dash --plot lr --epochs 1000 --rate-skip 0 --cpu-poll 0.5 --log '$run/logs' 2>'$run/stderr'; echo \$? > '$run/code'; sleep 600"

  # The panels: header with the lag, progress with a rate, the loss and lr charts, the keys
  # table, the CPU and GPU panels.
  wanted=("giving dash" "lag: pending" "progress" "train" "items/s" "loss = " " lr = " "keys"
    "global_step" " CPU " "process: cpu" " GPU ")
  seen=0
  for _ in $(seq 1 600); do
    tmux_ capture-pane -p -t tui > "$run/screen" 2>/dev/null || true
    missing=()
    for text in "${wanted[@]}"; do
      grep -qF -- "$text" "$run/screen" || missing+=("$text")
    done
    if [ ${#missing[@]} -eq 0 ]; then
      seen=1
      break
    fi
    [ -f "$run/code" ] && fail "giving exited before the dashboard showed everything"
    sleep 0.1
  done
  [ "$seen" = 1 ] || fail "the dashboard never showed: ${missing[*]}"
  echo "== tui.sh: the dashboard shows every panel"
  cat "$run/screen"

  if [ "$key" = SIGTERM ]; then
    # As a service manager or `timeout` stops it: a signal, not a key.
    pid="$(pgrep -f -- "--log $run/logs" | head -1)"
    [ -n "$pid" ] || fail "cannot find the giving process"
    kill -TERM "$pid"
  else
    tmux_ send-keys -t tui "$key"
  fi
  for _ in $(seq 1 600); do
    [ -f "$run/code" ] && break
    sleep 0.1
  done
  [ -f "$run/code" ] || fail "giving did not exit within 60 s of $key"
  code="$(cat "$run/code")"
  [ "$code" = "$expected" ] || { cat "$run/stderr" >&2; fail "exit code $code after $key (expected $expected)"; }
  tmux_ capture-pane -p -t tui > "$run/screen"
  grep -qF "giving dash" "$run/screen" && fail "the terminal was not restored (the dashboard is still on screen)"
  grep -qF "(stopped early)" "$run/screen" || fail "no summary of a run stopped early after $key"
  echo "== tui.sh: $key stopped the run cleanly (exit code $code), the terminal is restored"

  logs=("$run"/logs/*.msgpack)
  [ -f "${logs[0]}" ] || fail "no log written in $run/logs"
  "$bin" log stats "${logs[0]}" > "$run/stats" || fail "giving log stats failed"
  cat "$run/stats"
  grep -q "events over" "$run/stats" || fail "the log has no events"
  grep -qE "^ +loss +[0-9]+" "$run/stats" || fail "the log has no loss"
  grep -q "warning" "$run/stats" && fail "the log was cut: $(grep warning "$run/stats")"
  echo "== tui.sh: the log reads back; OK"
  tmux_ kill-session -t tui || true
}

# `train mlp --learner`: burn-train's Learner under the dashboard as the bundled loop is (its
# progress, rate and loss through giving-burn), `q` stops it through the stop bridge and the
# log ends cleanly; then `--stop 2` ends it after two rates.
learner_run() {
  local run="$work/learner"
  mkdir -p "$run"
  tmux_ new-session -d -s tui -x 120 -y 40 \
    "'$bin' train mlp --learner --dash --epochs 1000 --rate-skip 0 --log '$run/logs' 2>'$run/stderr'; echo \$? > '$run/code'; sleep 600"
  for text in "giving dash" "progress" "train" "items/s" "loss = " "global_step"; do
    wait_screen "$run" "$text"
  done
  echo "== tui.sh: the dashboard shows the Learner's run"
  cat "$run/screen"
  tmux_ send-keys -t tui q
  for _ in $(seq 1 600); do
    [ -f "$run/code" ] && break
    sleep 0.1
  done
  [ -f "$run/code" ] || fail "giving train --learner did not exit within 60 s of q"
  code="$(cat "$run/code")"
  [ "$code" = 0 ] || { cat "$run/stderr" >&2; fail "exit code $code after q (--learner)"; }
  tmux_ capture-pane -p -t tui > "$run/screen"
  grep -qF "(stopped early)" "$run/screen" || fail "no summary of a Learner run stopped early"
  logs=("$run"/logs/*.msgpack)
  "$bin" log stats "${logs[0]}" > "$run/stats" || fail "giving log stats failed (--learner)"
  grep -q "end record" "$run/stats" || fail "the Learner's log has no end record"
  grep -qE "^ +loss +[0-9]+" "$run/stats" || fail "the Learner's log has no loss"
  tmux_ kill-session -t tui || true

  "$bin" train mlp --learner --stop 2 --rate-skip 0 --epochs 1000 --log "$run/stop" > "$run/out" 2>&1 ||
    fail "giving train mlp --learner --stop 2 failed: $(tail -3 "$run/out")"
  grep -qF "(stopped early)" "$run/out" || fail "--stop 2 did not stop the Learner: $(tail -3 "$run/out")"
  logs=("$run"/stop/*.msgpack)
  "$bin" log stats "${logs[0]}" > "$run/stats" || fail "giving log stats failed (--learner --stop)"
  grep -qE "^ +rate +2 " "$run/stats" || fail "--stop 2 did not end after two rates: $(grep rate "$run/stats")"
  echo "== tui.sh: --learner stops on q and after --stop N rates; its log ends cleanly; OK"
}

# Waits up to 60 s for `text` on the screen of session `tui`; the screen is left in $1/screen.
wait_screen() {
  local run="$1" text="$2"
  for _ in $(seq 1 600); do
    tmux_ capture-pane -p -t tui > "$run/screen" 2>/dev/null || true
    grep -qF -- "$text" "$run/screen" && return 0
    sleep 0.1
  done
  fail "the screen never showed: $text"
}

# --dash-hold: the final screen stays until a key; `l` switches the charts to a log scale.
hold_run() {
  local run="$work/hold"
  mkdir -p "$run"
  tmux_ new-session -d -s tui -x 120 -y 40 \
    "'$bin' train mlp --dash --dash-hold --steps 40 --batch-size 8 --train-size 64 --valid-size 16; echo \$? > '$run/code'; sleep 600"
  wait_screen "$run" "finished: press any key to close"
  grep -qF "epoch 5/5" "$run/screen" || fail "the run line does not name the last epoch"
  grep -qF "steps 40/40" "$run/screen" || fail "the run line does not show the whole run's steps"
  sleep 1
  [ -f "$run/code" ] && fail "giving exited without waiting for a key"
  tmux_ send-keys -t tui l
  wait_screen "$run" "(log scale)"
  [ -f "$run/code" ] && fail "\`l\` closed the held screen"
  tmux_ send-keys -t tui x
  for _ in $(seq 1 100); do [ -f "$run/code" ] && break; sleep 0.1; done
  [ "$(cat "$run/code" 2>/dev/null)" = 0 ] || fail "a key did not close the held screen with exit code 0"
  tmux_ capture-pane -p -t tui > "$run/screen"
  grep -qF "giving dash" "$run/screen" && fail "the terminal was not restored after the held screen"
  echo "== tui.sh: --dash-hold held the final screen until a key; l switched to a log scale; OK"
  tmux_ kill-session -t tui || true
}

# What other code writes to stderr goes to the panel, then to the scrollback: here the log's
# own failure report (a file-size limit stands in for a full disk).
stderr_run() {
  local run="$work/stderr"
  mkdir -p "$run"
  tmux_ new-session -d -s tui -x 120 -y 40 \
    "trap '' XFSZ; ulimit -f 16; '$bin' train mlp --dash --epochs 1000 --batch-size 8 --train-size 64 --valid-size 16 --log '$run/logs'; echo \$? > '$run/code'; sleep 600"
  wait_screen "$run" "stderr (1 lines)"
  grep -qF "msgpack-log" "$run/screen" || fail "the panel does not show the log's failure"
  grep -qF "giving dash" "$run/screen" || fail "the stderr line replaced the dashboard"
  tmux_ send-keys -t tui q
  for _ in $(seq 1 600); do [ -f "$run/code" ] && break; sleep 0.1; done
  [ "$(cat "$run/code" 2>/dev/null)" = 1 ] || fail "exit code $(cat "$run/code" 2>/dev/null) (expected 1: a sink failed)"
  tmux_ capture-pane -p -t tui > "$run/screen"
  grep -qF "failed during run" "$run/screen" || fail "the stderr line was not written out once the terminal was back"
  echo "== tui.sh: a stderr line went to the panel, then to the scrollback; OK"
  tmux_ kill-session -t tui || true
}

echo "== tui.sh: --dash-hold"
hold_run
echo "== tui.sh: stderr panel"
stderr_run
echo "== tui.sh: q"
dash_run q quit
echo "== tui.sh: Ctrl-C"
dash_run C-c interrupt
echo "== tui.sh: SIGTERM"
dash_run SIGTERM terminate 143
echo "== tui.sh: --learner"
learner_run
echo "== tui.sh: OK"
