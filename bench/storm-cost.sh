#!/usr/bin/env bash
# Client CPU per connection of a connection storm (`--connect-storm`, issue 26) against today's
# client CPU per request (`-t ping_mbulk`, one long-lived connection): what opening, preparing
# (HELLO 3, SELECT) and closing a connection costs respbench itself, in units of requests.
#
#   bash bench/storm-cost.sh                   # 20000 connects, 200000 requests, 3 reps
#   CONNECTS=5000 N=100000 REPS=1 bash bench/storm-cost.sh
#   SERVER=/path/to/valkey-server bash bench/storm-cost.sh
#
# Starts its own redis-server (or SERVER=path) on a free loopback port, server pinned to CPU 0
# and client to CPU 1 when there are two, and stops it by PID on exit (bench/lib.sh;
# RESPBENCH=path skips the build). Client CPU is user + system time from the rusage wait4()
# returns (all threads), start-up included. One opener
# (-c 1) and one connection (-c 1), so both sides do one thing at a time. Connections close in
# TIME_WAIT on the client side: CONNECTS stays well below the ephemeral port range.
set -euo pipefail

CONNECTS="${CONNECTS:-20000}"
N="${N:-200000}"
REPS="${REPS:-3}"
SERVER="${SERVER:-$(command -v redis-server || true)}"
. "$(dirname "$0")/lib.sh"
bench_respbench
bench_start_server "$SERVER"

storm=() req=()
for _ in $(seq "$REPS"); do
  storm+=("$(bench_cpu /dev/null "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$PORT" -3 --dbnum 1 \
    --connect-storm -c 1 -n "$CONNECTS" --no-server-stats)")
  req+=("$(bench_cpu /dev/null "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$PORT" -t ping_mbulk -c 1 \
    -n "$N" -q --no-server-stats)")
done
S="$(printf '%s\n' "${storm[@]}" | bench_median)"
R="$(printf '%s\n' "${req[@]}" | bench_median)"
python3 - "$S" "$CONNECTS" "$R" "$N" <<'PY'
import sys
s, c, r, n = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
per_connect, per_request = s / c * 1e6, r / n * 1e6
print("| case | client CPU µs (median) |")
print("|---|---|")
print(f"| per connection (connect, HELLO 3, SELECT, close) | {per_connect:.2f} |")
print(f"| per request (PING, one connection) | {per_request:.2f} |")
print(f"\na connection costs the client as much as {per_connect / per_request:.1f} requests")
PY
