#!/usr/bin/env bash
# A/B: what --json costs the client now that it keeps a journal (a line written and fdatasync'ed
# every second, the record replaced atomically at the end). Runs respbench with and without
# `--json FILE`, interleaved (the order alternates every rep), against one throwaway
# redis-server pinned to CPU 0 (clients on CPU 1 when there are two CPUs), and prints per
# request: client CPU (`perf stat -e task-clock`: user + system, start-up included), each rep's
# ratio and the median; then user-space instructions per request (callgrind, marginal between
# `-n M` and `-n 2M`, so start-up and the final record cancel out; under callgrind a run lasts
# longer, so it writes more journal lines per request than a real run: an upper bound).
# Target: < 2%.
#
#   bash bench/journal-cost.sh                      # SET -P 1 and -P 16, 5 reps
#   REPS=3 N1=300000 N16=3000000 bash bench/journal-cost.sh
#   RESPBENCH=target/release/respbench bash bench/journal-cost.sh   # no build
#
# Needs redis-server, perf, valgrind, taskset and python3.
# The server is stopped by PID on exit (bench/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

REPS="${REPS:-5}"
N1="${N1:-400000}"
N16="${N16:-4000000}"
# callgrind's M (-n M and -n 2M).
M="${M:-20000}"
. bench/lib.sh
bench_respbench
command -v perf >/dev/null || bench_die "perf (linux-perf) is needed"
command -v valgrind >/dev/null || bench_die "valgrind is needed"
bench_start_server "$(command -v redis-server || true)"

# One run: prints "cpu_ns_per_request".
run() {
  local n="$1" p="$2"; shift 2
  rm -f "$BENCH_TMP/run.json"
  "${PIN_CLIENT[@]}" perf stat -x, -o "$BENCH_TMP/perf.csv" -e task-clock \
    "$RESPBENCH" -p "$PORT" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >/dev/null
  python3 -c "
import sys
for line in open('$BENCH_TMP/perf.csv'):
    f = line.strip().split(',')
    if len(f) > 3 and f[2] == 'task-clock':
        print(f'{float(f[0]) * 1e6 / $n:.1f}')
"
}

# User-space instructions of one run under callgrind.
instructions() {
  local n="$1" p="$2"; shift 2
  rm -f "$BENCH_TMP/run.json" "$BENCH_TMP/cg.out"
  valgrind --tool=callgrind --callgrind-out-file="$BENCH_TMP/cg.out" \
    "$RESPBENCH" -p "$PORT" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >/dev/null 2>&1
  sed -n 's/^summary: \([0-9]*\).*/\1/p; s/^totals: \([0-9]*\).*/\1/p' "$BENCH_TMP/cg.out" | head -1
}

med() { printf '%s\n' "$@" | bench_median | python3 -c 'print(f"{float(input()):.4f}")'; }

echo "| -P | rep | CPU ns/req without | with --json | ratio |"
echo "|---|---|---:|---:|---:|"
for p in 1 16; do
  n="$N1"; [ "$p" = 16 ] && n="$N16"
  rc=()
  for rep in $(seq "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then
      off="$(run "$n" "$p")"; on="$(run "$n" "$p" --json "$BENCH_TMP/run.json")"
    else
      on="$(run "$n" "$p" --json "$BENCH_TMP/run.json")"; off="$(run "$n" "$p")"
    fi
    b="$(python3 -c "print(f'{$on / $off:.4f}')")"
    rc+=("$b")
    echo "| $p | $rep | $off | $on | $b |"
  done
  echo "| $p | median | | | $(med "${rc[@]}") |"
done

echo
echo "| -P | instructions/req without (marginal) | with --json | ratio |"
echo "|---|---:|---:|---:|"
for p in 1 16; do
  m="$M"; [ "$p" = 16 ] && m=$((M * 4))
  a1="$(instructions "$m" "$p")"; a2="$(instructions $((2 * m)) "$p")"
  b1="$(instructions "$m" "$p" --json "$BENCH_TMP/run.json")"
  b2="$(instructions $((2 * m)) "$p" --json "$BENCH_TMP/run.json")"
  python3 -c "
off = ($a2 - $a1) / $m; on = ($b2 - $b1) / $m
print(f'| $p | {off:.0f} | {on:.0f} | {on / off:.4f} |')"
done
