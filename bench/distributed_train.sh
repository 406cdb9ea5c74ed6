#!/usr/bin/env bash
# Benchmark: training throughput with N ranks x T threads against one process with all the
# threads, on the same global batch, from the log each run writes (train.jsonl).
#   bench/distributed_train.sh SOURCE TARGET VOCAB [--presets "small base"] [--steps 12] [--batch-tokens 4096]
# e.g. after scripts/demo:
#   bench/distributed_train.sh runs/en-es/data/train.en runs/en-es/data/train.es runs/en-es/vocab.model
# Per preset, three runs of --steps updates (the first 2 are not timed):
#   1x2      one process, 2 threads, batch_tokens B                      (what one runs alone)
#   1x2 acc2 one process, 2 threads, batch_tokens B/2, accumulate 2     (the same batches as 2x1)
#   2x1      mpirun -np 2, 1 thread each, batch_tokens B/2               (global batch B)
# and prints target tokens/s, seconds per update, and the allreduce's share of the update.
set -euo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then  # the comment above, without its '#'
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0
fi
if (($# < 3)); then
  echo "usage: bench/distributed_train.sh SOURCE TARGET VOCAB [--presets \"small base\"] [--steps 12] [--batch-tokens 4096]" >&2
  exit 2
fi
src=$1 tgt=$2 vocab=$3; shift 3
presets="small base" steps=12 batch=4096
while (($#)); do
  case "$1" in
    --presets) presets=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --batch-tokens) batch=$2; shift 2 ;;
    *) echo "distributed_train.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
attn=${ATTN:-build/src/attn}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun -np 2 --bind-to none)
if [[ $(id -u) -eq 0 ]]; then mpi+=(--allow-run-as-root); fi
((2 <= $(nproc))) || mpi+=(--oversubscribe)
common=(--train-source "$src" --train-target "$tgt" --vocabulary "$vocab" --max-steps "$steps" --log-every 1
        --save-every 0 --save-every-minutes 0 --warmup-steps 4000)
report() {  # name run_dir
  python3 - "$1" "$2/train.jsonl" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = [json.loads(l) for l in open(path) if '"train"' in l]
a, b = r[1], r[-1]  # after step 2 .. the last step
tokens = b["target_tokens"] - a["target_tokens"]; secs = b["elapsed_seconds"] - a["elapsed_seconds"]
steps = b["step"] - a["step"]
comm = sum(x.get("allreduce_seconds", 0) for x in r[2:])
unhidden = sum(x.get("communication_seconds", 0) for x in r[2:])
waiting = sum(x.get("waiting_seconds", 0) for x in r[2:])
print(f"  {name:9s} {tokens / secs:8.0f} target tok/s  {secs / steps:7.2f} s/update  allreduce {100 * comm / secs:5.1f}% ({comm / steps * 1000:.0f} ms/update: not hidden {unhidden / steps * 1000:.0f}, waiting {waiting / steps * 1000:.0f})")
PY
}
lscpu | grep -m1 "Model name" || true
for preset in $presets; do
  echo "$preset: global batch $batch tokens, $steps updates"
  "$attn" train --preset "$preset" "${common[@]}" --threads 2 --batch-tokens "$batch" --run-dir "$work/$preset-1x2" 2>/dev/null
  report "1x2" "$work/$preset-1x2"
  "$attn" train --preset "$preset" "${common[@]}" --threads 2 --batch-tokens $((batch / 2)) --accumulate 2 \
    --run-dir "$work/$preset-1x2acc" 2>/dev/null
  report "1x2 acc2" "$work/$preset-1x2acc"
  "${mpi[@]}" "$attn" train --preset "$preset" "${common[@]}" --threads 1 --batch-tokens $((batch / 2)) \
    --run-dir "$work/$preset-2x1" 2>/dev/null
  report "2x1" "$work/$preset-2x1"
done
