#!/usr/bin/env bash
# Client CPU per delivered message of `--pubsub` and `--stream` (issue 26) against the
# request/response engine's CPU per request (`-t publish`-like: PUBLISH as a custom command, and
# SET): subscribers share a few threads' event loops but parse every message into an owned
# value, and `--stream` uses blocking connections with one thread each, so a message costs more
# client CPU than a request on the engine's allocation-free hot path; this says how much more.
# Then the memory of a large fan-out (issue 33): peak RSS of `--pubsub` with MANY subscribers
# (default 2000 and 10000) against a plain `-c` run of as many connections, and the threads.
#
#   bash bench/delivery-cost.sh                # -n 200000 messages, 10 subscribers, 3 reps
#   N=50000 SUBS=10 REPS=1 bash bench/delivery-cost.sh
#   MANY="2000 10000" bash bench/delivery-cost.sh
#
# Starts its own redis-server (or valkey-server with SERVER=path) on a free loopback port,
# server pinned to CPU 0 and respbench to CPU 1 when there are two, and stops it by PID on exit
# (bench/lib.sh; RESPBENCH=path skips the build).
# Client CPU is user + system time from the rusage wait4() returns (all threads, start-up
# included). Prints a Markdown table: µs of client CPU per message delivered (pub/sub: per
# subscriber delivery; streams: per entry) or per request.
set -euo pipefail

N="${N:-200000}"
SUBS="${SUBS:-10}"
REPS="${REPS:-3}"
SERVER="${SERVER:-$(command -v redis-server || true)}"
. "$(dirname "$0")/lib.sh"
bench_respbench
# Room for the large fan-out's subscribers (the default maxclients is 10,000).
bench_start_server "$SERVER" --maxclients 20000

# Runs respbench (pinned) with --json and the given arguments; prints "cpu_seconds units" where
# units are the test's completions (deliveries, or requests).
measure() {
  local cpu
  rm -f "$BENCH_TMP/r.json"
  # --json first: after a custom command, it would be one of the command's arguments.
  cpu="$(bench_cpu /dev/null "${PIN_CLIENT[@]}" "$RESPBENCH" --json "$BENCH_TMP/r.json" "$@")"
  echo "$cpu $(python3 -c 'import json, sys
print(sum(t["requests"]["completed"] for t in json.load(open(sys.argv[1]))["tests"]))' \
    "$BENCH_TMP/r.json")"
}

declare -A CASES=(
  ["pubsub, $SUBS subscribers (per delivery)"]="--pubsub $SUBS -n $((N / SUBS)) -d 32"
  ["stream, 4 consumers (per entry)"]="--stream 4 -n $N -d 32"
  ["PUBLISH, -c 50 engine (per request)"]="-c 50 -n $N -q publish ch x"
  ["SET, -c 50 engine (per request)"]="-c 50 -n $N -q -t set"
)
echo "| case | client CPU µs per unit (median of $REPS) |"
echo "|---|---|"
for name in "${!CASES[@]}"; do
  vals=()
  for _ in $(seq "$REPS"); do
    # shellcheck disable=SC2086
    read -r cpu units < <(measure -p "$PORT" ${CASES[$name]})
    vals+=("$(python3 -c "print($cpu * 1e6 / max($units, 1))")")
  done
  med="$(printf '%s\n' "${vals[@]}" | bench_median)"
  printf '| %s | %.2f |\n' "$name" "$med"
done

# bench_peak CMD...: runs CMD (stdout discarded) and prints "peak_rss_mb max_threads": the peak
# resident set wait4() reports, and the most threads /proc/PID/status showed, sampled every 50 ms.
bench_peak() {
  python3 - "$@" <<'PY' || bench_die "failed: $*"
import os, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
most = 0
while True:
    pid, status, ru = os.wait4(p.pid, os.WNOHANG)
    if pid:
        break
    try:
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    most = max(most, int(line.split()[1]))
    except OSError:
        pass
    time.sleep(0.05)
if status != 0:
    sys.exit(1)
print(f"{ru.ru_maxrss / 1024:.1f} {most}")
PY
}

echo
echo "| connections | --pubsub peak RSS MB | threads | -c (GET) peak RSS MB | threads |"
echo "|---|---|---|---|---|"
for many in ${MANY:-2000 10000}; do
  # 100 messages at 50/s round 10 channels: every subscriber gets 10.
  read -r sub_mb sub_threads < <(bench_peak "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$PORT" \
    --pubsub "$many" --channels 10 -n 100 --rps 50 -q)
  read -r eng_mb eng_threads < <(bench_peak "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$PORT" \
    -c "$many" -n $((many * 10)) -t get -q)
  printf '| %s | %s | %s | %s | %s |\n' "$many" "$sub_mb" "$sub_threads" "$eng_mb" "$eng_threads"
done
