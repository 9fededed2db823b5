#!/usr/bin/env bash
# Client CPU per request of a 1:10 SET:GET mix (`--ratio 1:10`) against plain GET (`-t get`):
# the mix draws a command per request and times each into its own histogram, and the target
# (issue 12) is that this costs at most 10% more client CPU per request than plain GET.
#
#   bash bench/mix-cost.sh                 # -n 500000, 3 interleaved reps, -P 1 and -P 16
#   N=200000 REPS=1 bash bench/mix-cost.sh
#
# Starts its own redis-server (or valkey-server with SERVER=path) on a free loopback port,
# server pinned to CPU 0 and client to CPU 1 when there are two, and stops it by PID on exit.
# Client CPU is user + system time from the rusage wait4() returns (all threads), so start-up
# is included (small at these -n). Prints a Markdown table and the ratio mix / GET.
set -euo pipefail

N="${N:-500000}"
REPS="${REPS:-3}"
PIPELINES="${PIPELINES:-1 16}"
KEYSPACE="${KEYSPACE:-100000}"
SERVER="${SERVER:-$(command -v redis-server || true)}"
[ -x "$SERVER" ] || { echo "mix-cost.sh: error: no redis-server (set SERVER=path)" >&2; exit 1; }
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
# Every GET hits: fill the keyspace once.
"$BIN" -p "$PORT" -t set -r "$KEYSPACE" -n "$((KEYSPACE * 3))" -P 16 -q >/dev/null

# Runs respbench with the given arguments; prints "cpu_seconds rps".
measure() {
  python3 - "$@" <<'PY'
import os, re, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
out = p.stdout.read().decode()
_, status, ru = os.wait4(p.pid, 0)
if status != 0:
    sys.exit(f"failed: {sys.argv[1:]}")
rps = re.findall(r": ([0-9.]+) requests per second", out)[-1]
print(ru.ru_utime + ru.ru_stime, rps)
PY
}

echo "| case | client CPU µs/req (median of $REPS) | req/s (median) |"
echo "|---|---|---|"
declare -A CPU RPS
for P in $PIPELINES; do
  for rep in $(seq "$REPS"); do
    order=(get mix)
    [ $((rep % 2)) -eq 0 ] && order=(mix get)
    for kind in "${order[@]}"; do
      if [ "$kind" = get ]; then args=(-t get); else args=(--ratio 1:10); fi
      read -r cpu rps < <(measure "${PIN_CLIENT[@]}" "$BIN" -p "$PORT" -r "$KEYSPACE" \
        -n "$N" -P "$P" -c 50 --seed "$rep" -q "${args[@]}")
      CPU[$kind,$P]+="$cpu "
      RPS[$kind,$P]+="$rps "
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for P in $PIPELINES; do
  for kind in get mix; do
    cpu=$(echo "${CPU[$kind,$P]}" | median)
    rps=$(echo "${RPS[$kind,$P]}" | median)
    us=$(python3 -c "print(f'{$cpu * 1e6 / $N:.3f}')")
    eval "US_${kind}_$P=$us"
    label="GET"; [ "$kind" = mix ] && label="SET:GET 1:10"
    echo "| $label -P $P | $us | $rps |"
  done
done
echo
for P in $PIPELINES; do
  g="US_get_$P" m="US_mix_$P"
  python3 -c "r=${!m}/${!g}; print(f'-P $P: mix / GET client CPU per request = {r:.3f} ({(r-1)*100:+.1f}%, target within +10%)')"
done
