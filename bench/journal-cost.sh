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
# The server is stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS="${REPS:-5}"
N1="${N1:-400000}"
N16="${N16:-4000000}"
# callgrind's M (-n M and -n 2M).
M="${M:-20000}"
if [ -z "${RESPBENCH:-}" ]; then
  cargo build --release --quiet
  RESPBENCH="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/respbench"
fi

pin_server=() pin_client=()
if [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c 0) pin_client=(taskset -c 1)
fi

tmp="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"${pin_server[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$tmp" >"$tmp/redis.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done

# One run: prints "cpu_ns_per_request".
run() {
  local n="$1" p="$2"; shift 2
  rm -f "$tmp/run.json"
  "${pin_client[@]}" perf stat -x, -o "$tmp/perf.csv" -e task-clock \
    "$RESPBENCH" -p "$port" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >/dev/null
  python3 -c "
import sys
for line in open('$tmp/perf.csv'):
    f = line.strip().split(',')
    if len(f) > 3 and f[2] == 'task-clock':
        print(f'{float(f[0]) * 1e6 / $n:.1f}')
"
}

# User-space instructions of one run under callgrind.
instructions() {
  local n="$1" p="$2"; shift 2
  rm -f "$tmp/run.json" "$tmp/cg.out"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
    "$RESPBENCH" -p "$port" -c 50 -n "$n" -P "$p" -r 100000 -q -t set "$@" >/dev/null 2>&1
  sed -n 's/^summary: \([0-9]*\).*/\1/p; s/^totals: \([0-9]*\).*/\1/p' "$tmp/cg.out" | head -1
}

med() { printf '%s\n' "$@" | sort -n | python3 -c 'import sys; v=[float(x) for x in sys.stdin]; print(f"{v[len(v)//2]:.4f}")'; }

echo "| -P | rep | CPU ns/req without | with --json | ratio |"
echo "|---|---|---:|---:|---:|"
for p in 1 16; do
  n="$N1"; [ "$p" = 16 ] && n="$N16"
  rc=()
  for rep in $(seq "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then
      off="$(run "$n" "$p")"; on="$(run "$n" "$p" --json "$tmp/run.json")"
    else
      on="$(run "$n" "$p" --json "$tmp/run.json")"; off="$(run "$n" "$p")"
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
  b1="$(instructions "$m" "$p" --json "$tmp/run.json")"
  b2="$(instructions $((2 * m)) "$p" --json "$tmp/run.json")"
  python3 -c "
off = ($a2 - $a1) / $m; on = ($b2 - $b1) / $m
print(f'| $p | {off:.0f} | {on:.0f} | {on / off:.4f} |')"
done
