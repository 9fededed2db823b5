#!/usr/bin/env bash
# Client CPU per delivered message of `--pubsub` and `--stream` (issue 26) against the
# request/response engine's CPU per request (`-t publish`-like: PUBLISH as a custom command, and
# SET): the delivery modes use blocking connections with one thread each and parse every message
# into an owned value, so a message costs more client CPU than a request on the engine's
# allocation-free hot path; this says how much more.
#
#   bash bench/delivery-cost.sh                # -n 200000 messages, 10 subscribers, 3 reps
#   N=50000 SUBS=10 REPS=1 bash bench/delivery-cost.sh
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
bench_start_server "$SERVER"

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
