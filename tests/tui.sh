#!/usr/bin/env bash
# End-to-end test of the dashboard: runs `giving train mlp --dash` in a 120x40 tmux pane,
# checks the captured screen for the panels, presses `q`, then checks that the terminal was
# restored, the exit code is 0 and the MessagePack log (`--log DIR`) reads back with
# `giving log stats FILE`. Needs tmux; uses its own tmux server, so it never touches yours.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v tmux >/dev/null || { echo "tui.sh: tmux is required" >&2; exit 1; }

echo "== tui.sh: cargo build --release --bin giving"
cargo build --release --bin giving
target="${CARGO_TARGET_DIR:-target}"
bin="$(cd "$target/release" && pwd)/giving"

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
  tmux_ capture-pane -p -t tui 2>/dev/null >&2 || cat "$work/screen" >&2 2>/dev/null || true
  exit 1
}

# Many epochs: the run must still be going when `q` is pressed.
tmux_ new-session -d -s tui -x 120 -y 40 \
  "'$bin' train mlp --dash --plot lr --epochs 1000 --rate-skip 0 --cpu-poll 0.5 --log '$work/logs' 2>'$work/stderr'; echo \$? > '$work/code'; sleep 600"

# The panels: header with the lag, progress with a rate, the loss and lr charts, the keys
# table, the CPU and GPU panels.
wanted=("giving dash" "lag: pending" "progress" "train" "items/s" "loss = " " lr = " "keys"
  "global_step" " CPU " "process: cpu" " GPU ")
seen=0
for _ in $(seq 1 600); do
  tmux_ capture-pane -p -t tui > "$work/screen" 2>/dev/null || true
  missing=()
  for text in "${wanted[@]}"; do
    grep -qF -- "$text" "$work/screen" || missing+=("$text")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    seen=1
    break
  fi
  [ -f "$work/code" ] && fail "giving exited before the dashboard showed everything"
  sleep 0.1
done
[ "$seen" = 1 ] || fail "the dashboard never showed: ${missing[*]}"
echo "== tui.sh: the dashboard shows every panel"
cat "$work/screen"

tmux_ send-keys -t tui q
for _ in $(seq 1 600); do
  [ -f "$work/code" ] && break
  sleep 0.1
done
[ -f "$work/code" ] || fail "giving did not exit within 60 s of q"
code="$(cat "$work/code")"
[ "$code" = 0 ] || { cat "$work/stderr" >&2; fail "exit code $code after q"; }
tmux_ capture-pane -p -t tui > "$work/screen"
grep -qF "giving dash" "$work/screen" && fail "the terminal was not restored (the dashboard is still on screen)"
grep -qF "(stopped early)" "$work/screen" || fail "no summary of a run stopped early after q"
echo "== tui.sh: q stopped the run cleanly (exit code 0), the terminal is restored"

logs=("$work"/logs/*.msgpack)
[ -f "${logs[0]}" ] || fail "no log written in $work/logs"
"$bin" log stats "${logs[0]}" > "$work/stats" || fail "giving log stats failed"
cat "$work/stats"
grep -q "events over" "$work/stats" || fail "the log has no events"
grep -qE "^ +loss +[0-9]+" "$work/stats" || fail "the log has no loss"
grep -q "warning" "$work/stats" && fail "the log was cut: $(grep warning "$work/stats")"
echo "== tui.sh: the log reads back; OK"
