#!/usr/bin/env bash
# How a long run's own memory grows: the resident memory (VmRSS) of a running respbench at 5 s
# and at SECS s, as kB per second of test and MB per 24 h, for each case, with and without a
# journal (`--json`). A run keeps each second's figures for its record's per-second rows
# (`metrics::Timeline`); this says what a day's unattended run needs.
#
# With BASE=PATH (another respbench binary, e.g. an earlier commit's release build) every case
# runs with both, one after the other against the same server, and both rows are printed.
#
# Cases: `set` (SET -c 50), `cluster` (--cluster over three primaries started here with
# redis-cli --cluster create, -t set), `pubsub` (--pubsub 10 at 2,000 messages a second: each
# subscriber keeps its own seconds). CASES picks them.
#
#   bash bench/run-memory.sh
#   SECS=120 BASE=/tmp/respbench-before CASES=set bash bench/run-memory.sh
#
# Each run is an hour's test (`--duration 3600`; pubsub: an hour of messages) stopped with SIGKILL
# at SECS (bounded: nothing runs past it). Needs python3, and redis-cli for the cluster case. Every server is stopped by its PID on
# exit (bench/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

SECS="${SECS:-60}"
CASES="${CASES:-set cluster pubsub}"
BASE="${BASE:-}"
SERVER="${SERVER:-$HOME/.cache/respbench/valkey-9.1/valkey-server}"
. bench/lib.sh
bench_respbench
[ -x "$SERVER" ] || SERVER="$(command -v redis-server || true)"
[ "$SECS" -gt 10 ] || bench_die "SECS must be over 10 (the first reading is at 5 s)"
BINS=("$RESPBENCH")
[ -z "$BASE" ] || BINS+=("$BASE")

# rss_row LABEL BIN ARGS...: runs BIN ARGS for SECS s and prints one table row.
rss_row() {
  local label="$1" bin="$2"
  shift 2
  ${PIN_CLIENT[@]+"${PIN_CLIENT[@]}"} "$bin" "$@" -q >/dev/null 2>"$BENCH_TMP/err" &
  local pid=$!
  sleep 5
  local rss0 rss1
  rss0="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
  sleep "$((SECS - 5))"
  rss1="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ "$rss1" != 0 ] || bench_die "$label: the run ended early: $(tail -3 "$BENCH_TMP/err")"
  python3 - "$label" "$bin" "$rss0" "$rss1" "$SECS" <<'PY'
import sys
label, binary, a, b, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
per_s = (b - a) / (secs - 5)
print(f"| {label} | {binary} | {a:,} | {b:,} | {per_s:,.1f} | {per_s * 86400 / 1e3:,.0f} |")
PY
}

# each_bin LABEL ARGS...: a row per binary; the journal case writes into BENCH_TMP.
each_bin() {
  local label="$1"
  shift
  for bin in "${BINS[@]}"; do
    rss_row "$label" "$bin" "$@"
    rss_row "$label --json" "$bin" "$@" --json "$BENCH_TMP/run.json"
    rm -f "$BENCH_TMP/run.json" "$BENCH_TMP/run.json.partial"
  done
}

echo "# a run's memory growth ($(date -u +%Y-%m-%dT%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg); $($SERVER --version | head -c 60); ${SECS} s a run; $PINNING)"
echo
echo "| case | binary | VmRSS at 5 s (kB) | at $SECS s (kB) | kB per second | MB per 24 h |"
echo "|---|---|---:|---:|---:|---:|"
for c in $CASES; do
  case "$c" in
    set)
      bench_start_server "$SERVER"
      each_bin set -p "$PORT" -c 50 -t set --duration 3600
      ;;
    cluster)
      bench_start_cluster "$SERVER"
      each_bin cluster -p "$PORT" --cluster -c 50 -t set --duration 3600
      ;;
    pubsub)
      bench_start_server "$SERVER"
      each_bin pubsub -p "$PORT" --pubsub 10 --rps 2000 -n 7200000
      ;;
    *) bench_die "unknown case $c (set, cluster, pubsub)" ;;
  esac
  for pid in ${BENCH_SERVER_PIDS[@]+"${BENCH_SERVER_PIDS[@]}"}; do bench_stop_server "$pid"; done
  BENCH_SERVER_PIDS=()
done
