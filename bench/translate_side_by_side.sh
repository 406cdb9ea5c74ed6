#!/usr/bin/env bash
# attn's translate_bench and the same workload in PyTorch (bench/pytorch_translate.py), side by side:
#   bench/translate_side_by_side.sh [PRESET...]        default: small base
# Env: BUILD (default build), THREADS (PyTorch threads, default 2), OUT (raw lines, default a temp file),
#      TABLE_ONLY=FILE (only print the table of lines already collected in FILE).
# Prints every raw line, then a markdown table: target tokens/s per engine x beam x batch with the
# ratios attn-int8/attn-fp32 and attn-int8/torch-int8, then batch-1 latency, peak RSS and model size
# per engine. An engine that did not run (or a figure it does not print) shows as "—".
# The machine's cores are shared: run it on an idle machine and compare figures of one run only.
set -euo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then  # the comment above, without its '#'
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0
fi
cd "$(dirname "$0")/.."

# attn's precisions: fp32 and int8, and bf16 where the CPU has AVX512-BF16 (ATTN_PRECISIONS overrides).
default_precisions="fp32 int8"
if grep -qw avx512_bf16 /proc/cpuinfo; then default_precisions="fp32 bf16 int8"; fi
ATTN_PRECISIONS="${ATTN_PRECISIONS:-$default_precisions}"

BUILD="${BUILD:-build}"
THREADS="${THREADS:-2}"
PRESETS=("$@")
[ ${#PRESETS[@]} -gt 0 ] || PRESETS=(small base)
OUT="${OUT:-$(mktemp /tmp/translate_side_by_side.XXXXXX)}"

if [ -z "${TABLE_ONLY:-}" ]; then
  : >"$OUT"
  bench="$BUILD/bench/translate_bench"
  if [ -x "$bench" ]; then
    if [ -z "$ATTN_PRECISIONS" ]; then
      "$bench" "${PRESETS[@]}" | sed -u 's/^/engine=attn-fp32 /' | tee -a "$OUT"
    else
      for p in $ATTN_PRECISIONS; do
        "$bench" --precision "$p" "${PRESETS[@]}" | sed -u "s/^/engine=attn-$p /" | tee -a "$OUT"
      done
    fi
  else
    echo "note: $bench not found (build it with scripts/test or cmake --build $BUILD): attn columns will be empty" >&2
  fi
  /usr/bin/python3 bench/pytorch_translate.py --threads "$THREADS" "${PRESETS[@]}" | tee -a "$OUT"
else
  OUT="$TABLE_ONLY"
fi

/usr/bin/python3 - "$OUT" <<'PY'
import re
import sys

ALL_ENGINES = ["attn-fp32", "attn-bf16", "attn-int8", "torch-fp32", "torch-int8"]
runs, models = {}, {}


def number(text):
    """A figure's value: 58% (at_ceiling) reads as 58; a value that is not a number, as None."""
    try:
        return float(text.removesuffix("%"))
    except ValueError:
        return None


for line in open(sys.argv[1]):
    m = re.match(r"engine=(\S+) translate\s+(\S+)\s+(.*)", line)
    if m:
        engine, preset, rest = m.groups()
        kv = dict(re.findall(r"(\S+?)=(\S+)", rest))
        figures = {k: number(v) for k, v in kv.items()}
        runs[(engine, preset, int(kv["beam"]), int(kv["batch"]))] = {k: v for k, v in figures.items() if v is not None}
        continue
    m = re.match(r"engine=(\S+) model\s+(\S+)\s+(.*)", line)
    if m:
        engine, preset, rest = m.groups()
        models[(engine, preset)] = dict(re.findall(r"(\S+?)=(\S+)", rest))
ENGINES = [e for e in ALL_ENGINES if any(k[0] == e for k in runs)] or ALL_ENGINES
ENGINES += sorted({k[0] for k in runs} - set(ENGINES))
presets = list(dict.fromkeys(k[1] for k in runs))


def fig(engine, preset, beam, batch, key, fmt="{:.0f}"):
    r = runs.get((engine, preset, beam, batch))
    return fmt.format(r[key]) if r and key in r else "—"


def ratio(a, b, preset, beam, batch, key="target_tokens/s"):
    ra, rb = runs.get((a, preset, beam, batch)), runs.get((b, preset, beam, batch))
    return f"{ra[key] / rb[key]:.2f}×" if ra and rb and rb[key] > 0 else "—"


print()
print("Target tokens/s (32-token sources, 40 output tokens, vocabulary 8000):")
print()
print("| preset | beam | batch | " + " | ".join(ENGINES) + " | attn-int8 / attn-fp32 | attn-int8 / torch-int8 |")
print("|---|---:|---:|" + "---:|" * (len(ENGINES) + 2))
for preset in presets:
    for beam in (1, 4):
        for batch in (1, 8, 32):
            cells = [fig(e, preset, beam, batch, "target_tokens/s") for e in ENGINES]
            print(f"| {preset} | {beam} | {batch} | " + " | ".join(cells) + f" | {ratio('attn-int8', 'attn-fp32', preset, beam, batch)}"
                  f" | {ratio('attn-int8', 'torch-int8', preset, beam, batch)} |")
print()
print("Beam 4's target tokens/s as a share of greedy's at the same batch:")
print()
print("| preset | batch | " + " | ".join(ENGINES) + " |")
print("|---|---:|" + "---:|" * len(ENGINES))
for preset in presets:
    for batch in (1, 8, 32):
        print(f"| {preset} | {batch} | " + " | ".join(
            (lambda b, g: f"{b / g:.0%}" if b and g else "—")(
                runs.get((e, preset, 4, batch), {}).get("target_tokens/s"),
                runs.get((e, preset, 1, batch), {}).get("target_tokens/s")) for e in ENGINES) + " |")
print()
print("Per engine: one sentence's latency (batch 1), peak resident memory (largest of its configurations),")
print("model size on disk (PyTorch: torch.save of the state_dict; attn: its model.safetensors):")
print()
print("| preset | engine | latency greedy, ms | latency beam 4, ms | peak RSS, MB | model size, MB |")
print("|---|---|---:|---:|---:|---:|")
for preset in presets:
    for e in ENGINES:
        peaks = [r["peak_rss_MB"] for k, r in runs.items() if k[0] == e and k[1] == preset and "peak_rss_MB" in r]
        model = models.get((e, preset), {})
        size = next((model[k] for k in ("state_dict_MB", "model_MB", "size_MB") if k in model), "—")
        print(f"| {preset} | {e} | {fig(e, preset, 1, 1, 'latency_ms', '{:.1f}')} | {fig(e, preset, 4, 1, 'latency_ms', '{:.1f}')} | "
              f"{f'{max(peaks):.0f}' if peaks else '—'} | {size} |")
PY
echo "(raw lines: $OUT)"
