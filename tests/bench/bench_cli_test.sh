#!/usr/bin/env bash
# The command line of a bench program (bench/bench_cli.h), as a user meets it:
#   tests/bench/bench_cli_test.sh PROGRAM ['ARGUMENTS|WORD' ...]
# PROGRAM --help exits 0 with "Usage: NAME" on stdout; PROGRAM --no-such-option exits 2 with
# "NAME: ..." naming the option on stderr; and so does each ARGUMENTS given (split at spaces), with
# WORD in its message. Nothing may die with an uncaught exception.
#   tests/bench/bench_cli_test.sh --scripts BENCH_DIR
# Each script of BENCH_DIR (*.sh, *.py; those that import torch only where it imports) answers
# --help with exit 0 and its usage (its own name) on stdout.
set -uo pipefail
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# Runs "$@" (an argument list), with stdout in $out, stderr in $err; sets rc.
run() {
  "$@" >"$out" 2>"$err"
  rc=$?
}

if [[ "${1:-}" == --scripts ]]; then
  have_torch=0
  /usr/bin/python3 -c "import torch" 2>/dev/null && have_torch=1
  for script in "$2"/*.sh "$2"/*.py; do
    name=$(basename "$script")
    if grep -q '^import torch' "$script" && ((!have_torch)); then
      echo "skipped: $name (torch does not import)"
      continue
    fi
    case "$script" in
      *.sh) run bash "$script" --help ;;
      *.py) run /usr/bin/python3 "$script" --help ;;
    esac
    if ((rc != 0)); then
      fail "$name --help: exit $rc, not 0: $(cat "$err")"
    elif ! grep -q -F "$name" "$out"; then
      fail "$name --help: its usage (naming $name) not on stdout: $(head -5 "$out")"
    else
      echo "ok: $name --help"
    fi
  done
  ((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
  exit 0
fi

program=$1
shift
name=$(basename "$program")

run "$program" --help
if ((rc != 0)); then
  fail "$name --help: exit $rc, not 0: $(cat "$err")"
elif ! grep -q "^Usage: $name" "$out"; then
  fail "$name --help: no 'Usage: $name' on stdout: $(head -5 "$out")"
else
  echo "ok: $name --help"
fi

# A bad argument: exit 2, "NAME: ..." on stderr with WORD in it, no uncaught exception.
bad() {
  local arguments=$1 word=$2
  local -a args
  read -r -a args <<<"$arguments"
  run "$program" "${args[@]}"
  if ((rc != 2)); then
    fail "$name $arguments: exit $rc, not 2: $(cat "$err")"
  elif grep -q "terminate called" "$err"; then
    fail "$name $arguments: died of an uncaught exception: $(cat "$err")"
  elif ! grep -q "^$name: .*$word" "$err"; then
    fail "$name $arguments: no '$name: ...$word...' on stderr: $(cat "$err")"
  else
    echo "ok: $name $arguments -> $(head -1 "$err")"
  fi
}

bad --no-such-option --no-such-option
for case in "$@"; do
  bad "${case%%|*}" "${case#*|}"
done
((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
