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
# and client to CPU 1 when there are two, and stops it by PID on exit. Client CPU is user +
# system time from the rusage wait4() returns (all threads), start-up included. One opener
# (-c 1) and one connection (-c 1), so both sides do one thing at a time. Connections close in
# TIME_WAIT on the client side: CONNECTS stays well below the ephemeral port range.
set -euo pipefail

CONNECTS="${CONNECTS:-20000}"
N="${N:-200000}"
REPS="${REPS:-3}"
SERVER="${SERVER:-$(command -v redis-server || true)}"
[ -x "$SERVER" ] || { echo "storm-cost.sh: error: no redis-server (set SERVER=path)" >&2; exit 1; }
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
TARGET="$(cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
BIN="$TARGET/release/respbench"

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
PIN_SERVER=() PIN_CLIENT=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  PIN_SERVER=(taskset -c 0) PIN_CLIENT=(taskset -c 1)
fi
"${PIN_SERVER[@]}" "$SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --daemonize no >/dev/null 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  "$BIN" -p "$PORT" -n 1 -t ping_mbulk -q >/dev/null 2>&1 && break
  sleep 0.1
done

# Runs respbench with the given arguments; prints its CPU seconds (user + system).
cpu() {
  python3 - "$@" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
if status != 0:
    sys.exit(f"failed: {sys.argv[1:]}")
print(ru.ru_utime + ru.ru_stime)
PY
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

storm=() req=()
for _ in $(seq "$REPS"); do
  storm+=("$(cpu "${PIN_CLIENT[@]}" "$BIN" -p "$PORT" -3 --dbnum 1 --connect-storm -c 1 \
    -n "$CONNECTS" --no-server-stats)")
  req+=("$(cpu "${PIN_CLIENT[@]}" "$BIN" -p "$PORT" -t ping_mbulk -c 1 -n "$N" -q \
    --no-server-stats)")
done
S="$(printf '%s\n' "${storm[@]}" | median)"
R="$(printf '%s\n' "${req[@]}" | median)"
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
