#!/usr/bin/env bash
# A/B: what --json costs the client now that it keeps a journal (a line written and fdatasync'ed
# every second, with each second's exact histograms; the record replaced atomically at the end).
# Runs respbench with and without `--json FILE` against one throwaway redis-server pinned to
# CPU 0 (clients on CPU 1 when there are two CPUs), and prints per request:
#
# 1. client CPU (`perf stat -e task-clock`: user + system, start-up included), interleaved (the
#    order rotates every rep), each rep's ratio and the median;
# 2. user-space instructions (callgrind). The journal's work is per second, not per request,
#    and under callgrind a run is ~50x slower, so a plain "instructions per request" under
#    callgrind charges each request ~50x too many seconds (the old figure of this script). So
#    the two parts are measured apart and put together at the real rate:
#      - per request: the marginal count without --json between `-n M` and `-n 2M` (start-up
#        cancels out);
#      - per second of test: the inclusive instructions of the journal's per-second work (the
#        workers' `ExactSecond::take_delta`, the main thread's `Observer::second` that writes
#        and syncs the line) in the `-n 2M --json` run, divided by its test's seconds (its
#        record's duration). It follows the seconds' latency spread, which is wide under
#        callgrind (a slow client): read it as an upper bound. With a small M the test lasts
#        only a few seconds and its once-per-test lines dominate it (M=2000 read 4-5 M/s where
#        M=20000 read 1-1.5 M/s);
#      - per request at the real rate: per second / the requests per second of the CPU runs
#        without --json (one worker thread: one worker's rate).
#    The whole-process marginal with --json is printed too, for what it is.
#
# With BASE=PATH (another respbench binary, e.g. an earlier commit's release build) every
# measurement is also made for it, in the same run and interleaved: before and after side by
# side, on the same machine load.
# Target: < 2%.
#
#   bash bench/journal-cost.sh                      # SET -P 1 and -P 16, 5 reps
#   REPS=3 N1=300000 N16=3000000 bash bench/journal-cost.sh
#   RESPBENCH=target/release/respbench BASE=/tmp/respbench-before bash bench/journal-cost.sh
#
# Needs redis-server, perf, valgrind (callgrind_annotate), objcopy, taskset and python3.
# The server is stopped by PID on exit (bench/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

REPS="${REPS:-5}"
N1="${N1:-400000}"
N16="${N16:-4000000}"
# callgrind's M (-n M and -n 2M) at -P 1; four times that at -P 16.
M="${M:-20000}"
BASE="${BASE:-}"
. bench/lib.sh
bench_respbench
command -v perf >/dev/null || bench_die "perf (linux-perf) is needed"
command -v valgrind >/dev/null || bench_die "valgrind is needed"
BINS=("$RESPBENCH")
[ -z "$BASE" ] || BINS+=("$BASE")
bench_start_server "$(command -v redis-server || true)"

# One run of binary $1: prints "cpu_ns_per_request requests_per_second".
run() {
  local bin="$1" n="$2" p="$3"; shift 3
  rm -f "$BENCH_TMP/run.json"
  "${PIN_CLIENT[@]}" perf stat -x, -o "$BENCH_TMP/perf.csv" -e task-clock \
    "$bin" -p "$PORT" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >"$BENCH_TMP/out.txt"
  python3 -c "
import re
rps = float(re.search(r'SET: ([0-9.]+) requests per second', open('$BENCH_TMP/out.txt').read())[1])
for line in open('$BENCH_TMP/perf.csv'):
    f = line.strip().split(',')
    if len(f) > 3 and f[2] == 'task-clock':
        print(f'{float(f[0]) * 1e6 / $n:.1f} {rps:.0f}')
"
}

# Copies without debug info for callgrind: with it, callgrind_annotate splits a function's
# inclusive count over the files its inlined code came from; without it, one line per function.
for b in "${!BINS[@]}"; do
  objcopy --strip-debug "${BINS[$b]}" "$BENCH_TMP/bin$b"
done

# User-space instructions of one run of binary $1 under callgrind (output kept in $BENCH_TMP/cg.out).
instructions() {
  local bin="$BENCH_TMP/bin$1" n="$2" p="$3"; shift 3
  rm -f "$BENCH_TMP/run.json" "$BENCH_TMP/cg.out"
  "${PIN_CLIENT[@]}" valgrind --tool=callgrind --callgrind-out-file="$BENCH_TMP/cg.out" \
    "$bin" -p "$PORT" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >/dev/null 2>&1
  sed -n 's/^summary: \([0-9]*\).*/\1/p; s/^totals: \([0-9]*\).*/\1/p' "$BENCH_TMP/cg.out" | head -1
}

# The journal's per-second work in $BENCH_TMP/cg.out: its inclusive instructions, and the seconds of
# the test in $BENCH_TMP/run.json ("instructions seconds").
journal_inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$BENCH_TMP/cg.out" 2>/dev/null | python3 -c "
import json, re, sys
total = 0
for line in sys.stdin:
    m = re.match(r'\s*([0-9,]+)\s.*(ExactSecond::take_delta|Journaled as [\w:]*Observer>::second)\b', line)
    if m:
        total += int(m[1].replace(',', ''))
secs = sum(t['duration_s'] for t in json.load(open('$BENCH_TMP/run.json'))['tests'])
print(total, secs)
"
}

med() { printf '%s\n' "$@" | sort -n | python3 -c 'import sys; v=[float(x) for x in sys.stdin]; print(f"{v[len(v)//2]:.4f}")'; }

echo "# journal cost ($(date -u +%Y-%m-%dT%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "binaries: ${BINS[*]}"
echo
echo "| -P | binary | rep | CPU ns/req without | with --json | ratio |"
echo "|---|---|---|---:|---:|---:|"
declare -A RPS RATIOS
for p in 1 16; do
  n="$N1"; [ "$p" = 16 ] && n="$N16"
  for rep in $(seq "$REPS"); do
    for b in "${!BINS[@]}"; do
      bin="${BINS[$b]}"
      if [ $(((rep + b) % 2)) = 1 ]; then
        read -r off rps <<<"$(run "$bin" "$n" "$p")"
        read -r on _ <<<"$(run "$bin" "$n" "$p" --json "$BENCH_TMP/run.json")"
      else
        read -r on _ <<<"$(run "$bin" "$n" "$p" --json "$BENCH_TMP/run.json")"
        read -r off rps <<<"$(run "$bin" "$n" "$p")"
      fi
      r="$(python3 -c "print(f'{$on / $off:.4f}')")"
      RATIOS[$p,$b]="${RATIOS[$p,$b]:-} $r"
      RPS[$p,$b]="${RPS[$p,$b]:-} $rps"
      echo "| $p | $b | $rep | $off | $on | $r |"
    done
  done
  for b in "${!BINS[@]}"; do
    # shellcheck disable=SC2086
    echo "| $p | $b | median | | | $(med ${RATIOS[$p,$b]}) |"
  done
done

echo
echo "Instructions (callgrind): per request without --json (marginal), the journal's work per"
echo "second of test (inclusive), that per request at the median real rate of the runs above,"
echo "and the whole-process marginal with --json (inflated by callgrind's slower seconds)."
echo
echo "| -P | binary | instr/req without | journal instr/s | real req/s | journal instr/req | ratio | marginal with --json |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for p in 1 16; do
  m="$M"; [ "$p" = 16 ] && m=$((M * 4))
  for b in "${!BINS[@]}"; do
    a1="$(instructions "$b" "$m" "$p")"
    a2="$(instructions "$b" $((2 * m)) "$p")"
    j1="$(instructions "$b" "$m" "$p" --json "$BENCH_TMP/run.json")"
    j2="$(instructions "$b" $((2 * m)) "$p" --json "$BENCH_TMP/run.json")"
    # Over the longer run's seconds. (A difference between the two runs would cancel the
    # once-per-test lines too, but the per-second work follows each second's latency spread,
    # which differs between runs under callgrind: the difference came out negative.)
    read -r t2 s2 <<<"$(journal_inclusive)"
    per_s="$(python3 -c "print(f'{$t2 / $s2:.0f}')")"
    # shellcheck disable=SC2086
    rate="$(med ${RPS[$p,$b]})"
    python3 -c "
per_req = ($a2 - $a1) / $m
extra = $per_s / $rate
print(f'| $p | $b | {per_req:,.0f} | {$per_s:,.0f} | {$rate:,.0f} | {extra:.1f} | {(per_req + extra) / per_req:.4f} | {($j2 - $j1) / $m:,.0f} |')"
  done
done
