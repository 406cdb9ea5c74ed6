#!/usr/bin/env bash
# Benchmark: training across 2 nodes with network stacks of their own (scripts/nodes: namespaces, a
# bridge, links shaped with tc), 1 core each, against 1 node of 1 core, at several link rates, with the
# gradient summed after the backward pass (allreduce after_backward) and during it (overlapped, in
# buckets). Root (ip netns). Stop other work on the machine first (scripts/table3 --pause).
#   bench/nodes_bench.sh SOURCE TARGET VOCAB [--presets "small base"] [--steps 12] [--batch-tokens 2048]
#                        [--rates "1gbit 10gbit"] [--delay 0.1ms] [--allreduce "after_backward overlapped"]
#                        [--bucket-mb 8] [--accumulate 1] [--wire "fp32"]
# e.g. after scripts/demo:
#   bench/nodes_bench.sh runs/en-es/data/train.en runs/en-es/data/train.es runs/en-es/vocab.model
# Per preset: 1 node x 1 core (batch_tokens B), then per rate 2 nodes x 1 core (B each: the global
# batch 2B); target tokens/s and seconds per update over the updates after the second, the
# update's time split into compute, communication that no rank's compute hid and the ranks' mean wait
# for the slower one (train.jsonl: communication_seconds, waiting_seconds; rank 0's whole time in the
# sums, allreduce_seconds, in brackets), and the scaling efficiency: tokens/s of 2 nodes / (2 x 1 node's).
# --accumulate K: every run (the 1-node one too) sums K batches an update: one allreduce for K
# batches' compute. --wire "fp32 bf16": each 2-node run with the gradient sent in each of these
# (attn train --allreduce-precision).
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 3 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi
src=$1 tgt=$2 vocab=$3; shift 3
presets="small base" steps=12 batch=2048 rates="1gbit 10gbit" delay=0.1ms ways="after_backward overlapped" bucket=8 accumulate=1 wires=fp32
while (($#)); do
  case "$1" in
    --presets) presets=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --batch-tokens) batch=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --allreduce) ways=$2; shift 2 ;;
    --bucket-mb) bucket=$2; shift 2 ;;
    --accumulate) accumulate=$2; shift 2 ;;
    --wire) wires=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
attn=$(realpath "${ATTN:-build/src/attn}")
src=$(realpath "$src") tgt=$(realpath "$tgt") vocab=$(realpath "$vocab")
name=bench$$
work=$(mktemp -d)
trap 'scripts/nodes down --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
common=(train --train-source "$src" --train-target "$tgt" --vocabulary "$vocab" --max-steps "$steps" --log-every 1
  --save-every 0 --save-every-minutes 0 --warmup-steps 4000 --threads 1 --batch-tokens "$batch" --accumulate "$accumulate" --precision fp32)
measure() {  # run_dir -> "tok/s s/update split" (split: "compute / not hidden / waiting (in sums)" ms, or -)
  python3 - "$1/train.jsonl" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
a, b = r[1], r[-1]  # after step 2 .. the last step
tokens = b["target_tokens"] - a["target_tokens"]; secs = b["elapsed_seconds"] - a["elapsed_seconds"]
steps = b["step"] - a["step"]
per = lambda key: sum(x.get(key, 0) for x in r[2:]) / steps * 1000
split = "-"
if "allreduce_seconds" in r[-1]:
    unhidden, waiting = per("communication_seconds"), per("waiting_seconds")
    split = f"{secs / steps * 1000 - unhidden - waiting:.0f}&nbsp;/&nbsp;{unhidden:.0f}&nbsp;/&nbsp;{waiting:.0f}&nbsp;({per('allreduce_seconds'):.0f})"
print(f"{tokens / secs:.0f} {secs / steps:.2f} {split}")
PY
}
echo "$(grep -m1 "model name" /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; $("$attn" --version 2>/dev/null | head -1)"
echo "batch_tokens $batch per node x accumulate $accumulate, $steps updates (the first 2 not timed), fp32, 1 thread per node, delay $delay"
echo
echo "| preset | nodes x cores | link | allreduce (gradient on the wire) | target tok/s | s/update | ms/update: compute / not hidden / waiting (in sums) | efficiency |"
echo "|---|---|---|---|---:|---:|---:|---:|"
for preset in $presets; do
  taskset -c 0 "$attn" "${common[@]}" --preset "$preset" --run-dir "$work/$preset-1" >"$work/$preset-1.log" 2>&1 ||
    { cat "$work/$preset-1.log" >&2; exit 1; }
  read -r one one_s _ < <(measure "$work/$preset-1")
  echo "| $preset | 1 x 1 | - | - | $one | $one_s | - | - |"
  # The same 2 ranks on this machine's 2 cores without a network (shared memory): what running
  # side by side costs (shared caches, memory bandwidth), apart from the links.
  mpirun -np 2 --bind-to core --map-by core $([[ $(id -u) -ne 0 ]] || echo --allow-run-as-root) \
    "$attn" "${common[@]}" --preset "$preset" --run-dir "$work/$preset-shm" --allreduce after_backward \
    >"$work/$preset-shm.log" 2>&1 || { cat "$work/$preset-shm.log" >&2; exit 1; }
  read -r two two_s comm < <(measure "$work/$preset-shm")
  echo "| $preset | 2 x 1 | shared memory | after_backward | $two | $two_s | $comm | $(python3 -c "print(f'{$two / (2 * $one):.0%}')") |"
  for rate in $rates; do
    scripts/nodes up --nodes 2 --rate "$rate" --delay "$delay" --name "$name" 2>"$work/up.log" ||
      { cat "$work/up.log" >&2; exit 1; }
    link=$(scripts/nodes status --name "$name" | sed -n 1p | sed 's/.*), links //; s/, on .*//')
    for way in $ways; do
      for wire in $wires; do
        run=$work/$preset-2-$rate-$way-$wire
        scripts/nodes run --name "$name" -- "$attn" "${common[@]}" --preset "$preset" --run-dir "$run" \
          --allreduce "$way" --allreduce-bucket-mb "$bucket" --allreduce-precision "$wire" >"$run.log" 2>&1 ||
          { cat "$run.log" >&2; exit 1; }
        read -r two two_s comm < <(measure "$run")
        echo "| $preset | 2 x 1 | $link | $way ($wire) | $two | $two_s | $comm | $(python3 -c "print(f'{$two / (2 * $one):.0%}')") |"
      done
    done
    scripts/nodes down --name "$name" 2>/dev/null
  done
done
