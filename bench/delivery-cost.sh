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
# server pinned to CPU 0 and respbench to CPU 1 when there are two, and stops it by PID on exit.
# Client CPU is user + system time from the rusage wait4() returns (all threads, start-up
# included). Prints a Markdown table: µs of client CPU per message delivered (pub/sub: per
# subscriber delivery; streams: per entry) or per request.
set -euo pipefail

N="${N:-200000}"
SUBS="${SUBS:-10}"
REPS="${REPS:-3}"
SERVER="${SERVER:-$(command -v redis-server || true)}"
[ -x "$SERVER" ] || { echo "delivery-cost.sh: error: no redis-server (set SERVER=path)" >&2; exit 1; }
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

# Runs respbench with the given arguments and --json; prints "cpu_seconds units" where units are
# the test's completions (deliveries, or requests).
measure() {
  python3 - "$@" <<'PY'
import json, os, subprocess, sys, tempfile
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "r.json")
    argv = sys.argv[1:]
    # Right after the binary: after a custom command, --json would be one of its arguments.
    at = next(i for i, a in enumerate(argv) if a.endswith("respbench")) + 1
    argv[at:at] = ["--json", path]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"failed: {sys.argv[1:]}")
    units = sum(t["requests"]["completed"] for t in json.load(open(path))["tests"])
print(ru.ru_utime + ru.ru_stime, units)
PY
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
    read -r cpu units < <(measure "${PIN_CLIENT[@]}" "$BIN" -p "$PORT" ${CASES[$name]})
    vals+=("$(python3 -c "print($cpu * 1e6 / max($units, 1))")")
  done
  med="$(printf '%s\n' "${vals[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
  printf '| %s | %.2f |\n' "$name" "$med"
done
