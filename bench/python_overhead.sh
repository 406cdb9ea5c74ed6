#!/usr/bin/env bash
# What translating through Python costs beside the command line: the same model, input, options and
# threads, `attn translate` against attn.Translator.translate (both timed around the translation
# alone: the command's own "translated ... in S s" line, and perf_counter around translate()), each
# REPEAT times, alternating, the best of each reported with the ratio.
#   bench/python_overhead.sh MODEL_DIR [INPUT]          default input: corpus/test.kjv (1042 verses)
# Env: BUILD (default build), THREADS (default 2), BEAM (default 4), REPEAT (default 3).
# Run on an idle machine; compare figures of one run only.
set -euo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then  # the comment above, without its '#'
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0
fi
cd "$(dirname "$0")/.."
model=${1:?usage: bench/python_overhead.sh MODEL_DIR [INPUT]}
input=${2:-corpus/test.kjv}
BUILD=${BUILD:-build} THREADS=${THREADS:-2} BEAM=${BEAM:-4} REPEAT=${REPEAT:-3}
attn=$BUILD/src/attn
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores;" \
  "model $model; input $input ($(wc -l < "$input") lines); beam $BEAM, threads $THREADS"
cli=() py=()
for ((i = 1; i <= REPEAT; i++)); do
  s=$("$attn" translate -m "$model" -i "$input" -o "$out" -b "$BEAM" --threads "$THREADS" 2>&1 |
      sed -n 's/^translated .* in \([0-9.]*\) s.*/\1/p')
  cli+=("$s")
  p=$(PYTHONPATH=$BUILD/python /usr/bin/python3 - "$model" "$input" "$BEAM" "$THREADS" "$out" <<'PY'
import sys, time, attn
model, input, beam, threads, expected = sys.argv[1:]
lines = open(input, encoding="utf-8").read().splitlines()
translator = attn.Translator(model, threads=int(threads))
start = time.perf_counter()
results = translator.translate(lines, beam=int(beam))
seconds = time.perf_counter() - start
assert [r.text for r in results] == open(expected, encoding="utf-8").read().splitlines(), "Python differs"
print(f"{seconds:.3f}")
PY
)
  py+=("$p")
  echo "run $i: attn translate ${s} s, Python ${p} s"
done
best() { printf '%s\n' "$@" | sort -g | head -1; }
c=$(best "${cli[@]}") p=$(best "${py[@]}")
echo "best: attn translate $c s, Python $p s, Python / command line = $(echo "$p / $c" | bc -l | cut -c1-5)"
