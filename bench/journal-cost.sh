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
#        workers' `ExactSecond::take_delta` and `ExactSecond::add`, the main thread's
#        `SecondsOut::hand` that copies each second out and writes and syncs its line, the
#        server watch's `follow_stats` that reads INFO commandstats latencystats for it; JOURNAL_FNS
#        in the script) in the `-n 2M --json` run, divided by its test's seconds (its
#        record's duration). It follows the seconds' latency spread, which is wide under
#        callgrind (a slow client): read it as an upper bound. With a small M the test lasts
#        only a few seconds and its once-per-test lines dominate it (M=2000 read 4-5 M/s where
#        M=20000 read 1-1.5 M/s);
#      - per request at the real rate: per second / the requests per second of the CPU runs
#        without --json (one worker thread: one worker's rate).
#    The whole-process marginal with --json is printed too, for what it is.
# 3. the journal's share of the client's CPU, natively: `perf record` samples (SAMPLE_HZ, call
#    graphs by DWARF) of one `-n N --json` run of each binary, and the share of them under the
#    journal's per-second work (the same functions as 2., kernel time under them included: the
#    line's write and fdatasync, the watch's INFO). Unlike 2., at the real rate and with the real seconds' latency spread (a second
#    under callgrind is ~50x slower and its latencies far wider, which the per-second work
#    follows); unlike 1., a share of one run's own samples, so the machine's load does not move
#    it much. Its error is about sqrt(share / samples). Twice: of all samples (user and kernel
#    time, as client CPU per request counts them), and of user-space samples only
#    (`cpu-clock:u`): a request's CPU is mostly its system calls, and the journal's work nearly
#    all user space, so this share is the one closest to the share of user-space instructions
#    that 2. estimates from above. perf shares the client's CPU, so both are upper bounds.
#
# PARTS picks measurements ("cpu callgrind share" by default; callgrind's per-request columns
# need cpu's rates).
#
# With BASE=PATH (another respbench binary, e.g. an earlier commit's release build) every
# measurement is also made for it, in the same run and interleaved: before and after side by
# side, on the same machine load.
#
# Cases (CASES, default all three): `1` and `16` (SET -P 1 and -P 16 against one server), and
# `cluster` (SET -P 1 --cluster against three primaries started here with redis-cli --cluster
# create: each second's line then carries every node's part too).
# Target: < 2%.
#
#   bash bench/journal-cost.sh                      # SET -P 1, -P 16 and --cluster, 5 reps
#   REPS=3 N1=300000 N16=3000000 bash bench/journal-cost.sh
#   CASES=cluster REPS=3 bash bench/journal-cost.sh
#   PARTS=share CASES="1 cluster" N1=1000000 bash bench/journal-cost.sh
#   RESPBENCH=target/release/respbench BASE=/tmp/respbench-before bash bench/journal-cost.sh
#
# Needs redis-server, perf, valgrind (callgrind_annotate), objcopy, taskset and python3, and
# redis-cli for the cluster case. Every server is stopped by its PID on exit (bench/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

REPS="${REPS:-5}"
N1="${N1:-400000}"
N16="${N16:-4000000}"
# callgrind's M (-n M and -n 2M) at -P 1; four times that at -P 16, eight in cluster mode.
M="${M:-20000}"
SAMPLE_HZ="${SAMPLE_HZ:-999}"
# Which measurements (all three by default); callgrind's per-request figures need cpu's rates.
PARTS="${PARTS:-cpu callgrind share}"
BASE="${BASE:-}"
CASES="${CASES:-1 16 cluster}"
. bench/lib.sh
bench_respbench
command -v perf >/dev/null || bench_die "perf (linux-perf) is needed"
command -v valgrind >/dev/null || bench_die "valgrind is needed"
BINS=("$RESPBENCH")
[ -z "$BASE" ] || BINS+=("$BASE")
REDIS="$(command -v redis-server || true)"
bench_start_server "$REDIS"
PLAIN_PORT="$PORT"
if [[ " $CASES " == *" cluster "* ]]; then
  bench_start_cluster "$REDIS"
  CLUSTER_PORT="$PORT"
fi

# A case's -P, its callgrind M as a multiple of M (a test of a few seconds under callgrind is
# mostly its once-per-test lines: -P 16 and the cluster's three workers go through M faster), and
# its arguments beyond the common ones ("p mult args...").
case_args() {
  case "$1" in
    1) echo "1 1 -p $PLAIN_PORT" ;;
    16) echo "16 4 -p $PLAIN_PORT" ;;
    cluster) echo "1 8 -p $CLUSTER_PORT --cluster" ;;
    *) bench_die "unknown case $1 (1, 16, cluster)" ;;
  esac
}

# One run of binary $1: prints "cpu_ns_per_request requests_per_second".
run() {
  local bin="$1" n="$2" p="$3"; shift 3
  rm -f "$BENCH_TMP/run.json"
  "${PIN_CLIENT[@]}" perf stat -x, -o "$BENCH_TMP/perf.csv" -e task-clock \
    "$bin" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >"$BENCH_TMP/out.txt"
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
    "$bin" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >/dev/null 2>&1
  sed -n 's/^summary: \([0-9]*\).*/\1/p; s/^totals: \([0-9]*\).*/\1/p' "$BENCH_TMP/cg.out" | head -1
}

# The journal's per-second work: the functions of the journal's own work per second (none inside
# another), by name. A build before SecondsOut::hand was kept out of line has the main thread's
# journal line only (Observer::second, inside hand), and its watch's read inlined in its loop.
JOURNAL_FNS='ExactSecond::take_delta|ExactSecond::add|SecondsOut::hand|sampler::follow_stats'
OLD_MAIN_FN='Journaled as [\w:]*Observer>::second'
# Sums NAME=VALUE lines of the journal's functions, Observer::second only where hand is absent.
JOURNAL_SUM="
def journal_sum(found):
    main = [v for k, v in found.items() if 'SecondsOut::hand' in k]
    rest = sum(v for k, v in found.items() if 'Observer>::second' not in k)
    return rest if main else rest + sum(v for k, v in found.items() if 'Observer>::second' in k)
"

# The journal's per-second work in $BENCH_TMP/cg.out: its inclusive instructions, and the seconds of
# the test in $BENCH_TMP/run.json ("instructions seconds").
journal_inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$BENCH_TMP/cg.out" 2>/dev/null | python3 -c "
import json, re, sys
$JOURNAL_SUM
found = {}
for line in sys.stdin:
    m = re.match(r'\s*([0-9,]+)\s.*($JOURNAL_FNS|$OLD_MAIN_FN)\b', line)
    if m:
        found[m[2]] = found.get(m[2], 0) + int(m[1].replace(',', ''))
total = journal_sum(found)
secs = sum(t['duration_s'] for t in json.load(open('$BENCH_TMP/run.json'))['tests'])
print(total, secs)
"
}

med() { printf '%s\n' "$@" | sort -n | python3 -c 'import sys; v=[float(x) for x in sys.stdin]; print(f"{v[len(v)//2]:.4f}")'; }

echo "# journal cost ($(date -u +%Y-%m-%dT%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "binaries: ${BINS[*]}"
echo
declare -A RPS RATIOS
if [[ " $PARTS " == *" cpu "* ]]; then
echo "| case | binary | rep | CPU ns/req without | with --json | ratio |"
echo "|---|---|---|---:|---:|---:|"
for c in $CASES; do
  read -r p _ args <<<"$(case_args "$c")"
  n="$N1"; [ "$p" = 16 ] && n="$N16"
  for rep in $(seq "$REPS"); do
    for b in "${!BINS[@]}"; do
      bin="${BINS[$b]}"
      # shellcheck disable=SC2086
      if [ $(((rep + b) % 2)) = 1 ]; then
        read -r off rps <<<"$(run "$bin" "$n" "$p" $args)"
        read -r on _ <<<"$(run "$bin" "$n" "$p" $args --json "$BENCH_TMP/run.json")"
      else
        read -r on _ <<<"$(run "$bin" "$n" "$p" $args --json "$BENCH_TMP/run.json")"
        read -r off rps <<<"$(run "$bin" "$n" "$p" $args)"
      fi
      r="$(python3 -c "print(f'{$on / $off:.4f}')")"
      RATIOS[$c,$b]="${RATIOS[$c,$b]:-} $r"
      RPS[$c,$b]="${RPS[$c,$b]:-} $rps"
      echo "| $c | $b | $rep | $off | $on | $r |"
    done
  done
  for b in "${!BINS[@]}"; do
    # shellcheck disable=SC2086
    echo "| $c | $b | median | | | $(med ${RATIOS[$c,$b]}) |"
  done
done
fi

if [[ " $PARTS " == *" callgrind "* ]]; then
echo
echo "Instructions (callgrind): per request without --json (marginal), the journal's work per"
echo "second of test (inclusive), that per request at the median real rate of the runs above,"
echo "and the whole-process marginal with --json (inflated by callgrind's slower seconds)."
echo
echo "| case | binary | instr/req without | journal instr/s | real req/s | journal instr/req | ratio | marginal with --json |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for c in $CASES; do
  read -r p mult args <<<"$(case_args "$c")"
  m=$((M * mult))
  for b in "${!BINS[@]}"; do
    # shellcheck disable=SC2086
    a1="$(instructions "$b" "$m" "$p" $args)"
    # shellcheck disable=SC2086
    a2="$(instructions "$b" $((2 * m)) "$p" $args)"
    # shellcheck disable=SC2086
    j1="$(instructions "$b" "$m" "$p" $args --json "$BENCH_TMP/run.json")"
    # shellcheck disable=SC2086
    j2="$(instructions "$b" $((2 * m)) "$p" $args --json "$BENCH_TMP/run.json")"
    # Over the longer run's seconds. (A difference between the two runs would cancel the
    # once-per-test lines too, but the per-second work follows each second's latency spread,
    # which differs between runs under callgrind: the difference came out negative.)
    read -r t2 s2 <<<"$(journal_inclusive)"
    per_s="$(python3 -c "print(f'{$t2 / $s2:.0f}')")"
    # shellcheck disable=SC2086
    rate="$(if [ -n "${RPS[$c,$b]:-}" ]; then med ${RPS[$c,$b]}; else echo 0; fi)"
    python3 -c "
per_req = ($a2 - $a1) / $m
extra = $per_s / $rate if $rate else None
at_rate = (f'{$rate:,.0f} | {extra:.1f} | {(per_req + extra) / per_req:.4f}' if extra is not None
           else '- | - | -')  # no CPU runs: no real rate
print(f'| $c | $b | {per_req:,.0f} | {$per_s:,.0f} | {at_rate} | {($j2 - $j1) / $m:,.0f} |')"
  done
done
fi

# The journal's share of the samples (event $1: cpu-clock, or cpu-clock:u for user space only) of
# one native --json run of binary $2 ("share_pct samples").
share() {
  local event="$1" bin="$2" n="$3" p="$4"; shift 4
  rm -f "$BENCH_TMP/run.json" "$BENCH_TMP/perf.data"
  "${PIN_CLIENT[@]}" perf record -q -e "$event" -F "$SAMPLE_HZ" --call-graph dwarf,16384 -o "$BENCH_TMP/perf.data" \
    "$bin" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" --json "$BENCH_TMP/run.json" >/dev/null 2>&1
  perf report -i "$BENCH_TMP/perf.data" --children --stdio --sort symbol 2>/dev/null | python3 -c "
import re, sys
$JOURNAL_SUM
found, samples = {}, 0
for line in sys.stdin:
    m = re.match(r'# Event count \(approx.\): (\d+)', line)
    if m:
        samples = round(int(m[1]) / 1e9 * $SAMPLE_HZ)  # cpu-clock counts nanoseconds
    m = re.match(r'\s+([0-9.]+)%\s+[0-9.]+%\s+\[\.\] (.*)', line)
    f = m and re.search(r'($JOURNAL_FNS|$OLD_MAIN_FN)\b', m[2])
    if f:
        found[f[1]] = found.get(f[1], 0) + float(m[1])
print(f'{journal_sum(found):.2f} {samples}')
"
  rm -f "$BENCH_TMP/perf.data"
}

if [[ " $PARTS " == *" share "* ]]; then
echo
echo "The journal's share of the client's CPU, natively (perf record at $SAMPLE_HZ Hz, -n N1/N16;"
echo "perf shares the client's CPU, so the rate is lower than unobserved and the share an upper"
echo "bound). All: user and kernel time (what client CPU per request counts); user space: user"
echo "time only (a request's CPU is mostly its system calls; this is the share closest to the"
echo "share of user-space instructions)."
echo
echo "| case | binary | share of all samples | samples | share of user-space samples | samples | req/s |"
echo "|---|---|---:|---:|---:|---:|---:|"
for c in $CASES; do
  read -r p _ args <<<"$(case_args "$c")"
  n="$N1"; [ "$p" = 16 ] && n="$N16"
  for b in "${!BINS[@]}"; do
    # shellcheck disable=SC2086
    read -r pct samples <<<"$(share cpu-clock "${BINS[$b]}" "$n" "$p" $args)"
    # shellcheck disable=SC2086
    read -r upct usamples <<<"$(share cpu-clock:u "${BINS[$b]}" "$n" "$p" $args)"
    rps="$(python3 -c "import json; t = json.load(open('$BENCH_TMP/run.json'))['tests'][0]; print(f\"{t['throughput_rps']:,.0f}\")")"
    echo "| $c | $b | $pct% | $samples | $upct% | $usamples | $rps |"
  done
done
fi
