#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, in one call of a lent device machine (no CI runs this).
#
# Build here first (the device machine has no toolchain and no network):
#   CARGO_TARGET_DIR=target/cuda cargo build --release --features cuda \
#     --config profile.release.debug=0 -p giving-cli --bin giving
#   mkdir -p .gpu && strip -o .gpu/giving target/cuda/release/giving
# then run `bash scripts/gpu-check.sh` there with `.gpu` carried. Every result goes to $OUT
# (bench.txt, train.txt, the log's stats, the trace) as it comes, so a timeout keeps what ran;
# the last lines printed are the medians of every bench.
set -u
B=${GIVING_BIN:-.gpu/giving}
# A dry run on another device (GIVING_CHECK_DEVICE=flex GIVING_CHECK_DRY=1) checks the script.
DEV=${GIVING_CHECK_DEVICE:-cuda}
if [ -n "${GIVING_CHECK_DRY:-}" ]; then R=1 LONG=20 SHORT=10; else R=9 LONG=1000 SHORT=300; fi
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
W=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.txt" || echo "no nvidia-smi" >"$OUT/gpu.txt"
echo "cpus: $(nproc)" | tee -a "$OUT/gpu.txt"

# One bench; its lines go to bench.txt under a header naming the command.
bench() {
  local label=$1 limit=$2; shift 2
  echo "=== $label: giving bench $*" >>"$OUT/bench.txt"
  timeout "$limit" "$B" bench "$@" >>"$OUT/bench.txt" 2>&1 || echo "=== $label: exit $?" >>"$OUT/bench.txt"
}
# The set a user turns on (rate always): the log and both monitors.
INSTR=(--instrumented --log "$W/log" --gpu-poll 1 --cpu-poll 1)

# 1. Quiet: every bundled model, 9 interleaved pairs each (issue 41, delivery 4).
bench "mlp quiet" 120 mlp --device "$DEV" --steps $LONG --repeats $R "${INSTR[@]}"
bench "cnn quiet" 120 cnn --device "$DEV" --steps $SHORT --repeats $R "${INSTR[@]}"
bench "charlm quiet" 120 charlm --device "$DEV" --steps $SHORT --repeats $R "${INSTR[@]}"
# 2. The model watch every 100 steps, on top of the same set (issue 45).
bench "mlp watch 100 quiet" 120 mlp --device "$DEV" --steps $LONG --repeats $R --watch 100 "${INSTR[@]}"

# 3. The same with every core busy: one spinning process per core.
HOGS=()
for _ in $(seq "$(nproc)"); do (while :; do :; done) & HOGS+=($!); done
bench "mlp hog" 150 mlp --device "$DEV" --steps $LONG --repeats $R "${INSTR[@]}"
bench "cnn hog" 120 cnn --device "$DEV" --steps $SHORT --repeats $R "${INSTR[@]}"
bench "charlm hog" 120 charlm --device "$DEV" --steps $SHORT --repeats $R "${INSTR[@]}"
kill "${HOGS[@]}" 2>/dev/null

# 4. The README's job on the GPU with the log, the trace, the GPU monitor and the watch; the
#    log read back (gpudata and watch events counted), the trace kept for Perfetto.
for model in mlp cnn; do
  echo "=== train $model" >>"$OUT/train.txt"
  timeout 90 "$B" train "$model" --device "$DEV" --steps $((LONG * 3 / 5)) --log "$W/train-$model" \
    --trace "$OUT/$model.perfetto-trace" --gpu-poll 1 --watch 100 >>"$OUT/train.txt" 2>&1 \
    || echo "=== train $model: exit $?" >>"$OUT/train.txt"
  for f in "$W/train-$model"/*; do "$B" log stats "$f" >>"$OUT/train-$model-stats.txt" 2>&1; done
done
ls -la "$OUT" "$W"/* >>"$OUT/train.txt" 2>&1

grep -E "^=== |median|first sync" "$OUT/bench.txt"
grep -E "^=== |images/s|error" "$OUT/train.txt" | tail -20
