#!/usr/bin/env bash
# A/B: what sampling the server (INFO once a second on its own connection) costs in throughput.
# Runs respbench with and without --no-server-stats, interleaved (the order alternates every
# rep), against one throwaway redis-server pinned to CPU 0 (clients on CPU 1 when there are two
# CPUs), and prints each run and the median ratio. The target is a cost under 1%.
#
#   bash bench/server-stats-ab.sh            # SET and GET, -n 1000000, 5 reps
#   N=200000 REPS=3 bash bench/server-stats-ab.sh
#   RESPBENCH=target/release/respbench bash bench/server-stats-ab.sh   # no build
#
# Needs redis-server, taskset and python3. The server is stopped by PID on exit (bench/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-1000000}"
REPS="${REPS:-5}"
TESTS="${TESTS:-set get}"
. bench/lib.sh
bench_respbench
bench_start_server "$(command -v redis-server || true)"

# One run: prints the throughput of the -q line.
run() {
  "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$PORT" -c 50 -n "$N" -r 100000 -q -t "$1" "${@:2}" |
    sed -n 's/^[^:]*: \([0-9.]*\) requests per second.*/\1/p'
}

echo "| test | rep | with server stats | --no-server-stats | ratio |"
echo "|---|---|---|---|---|"
for t in $TESTS; do
  ratios=()
  for rep in $(seq "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then
      on="$(run "$t")"; off="$(run "$t" --no-server-stats)"
    else
      off="$(run "$t" --no-server-stats)"; on="$(run "$t")"
    fi
    ratio="$(python3 -c "print(f'{$on / $off:.4f}')")"
    ratios+=("$ratio")
    echo "| $t | $rep | $on | $off | $ratio |"
  done
  echo "| $t | median | | | $(printf '%s\n' "${ratios[@]}" | bench_median) |"
done

# The cost in the server's own terms, which wall-clock noise does not blur: the time it spent
# answering INFO (commandstats), as a share of the time the runs with server stats lasted.
python3 - "$PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"INFO commandstats\r\n")
buf = b""
while not buf.endswith(b"\r\n") or buf.count(b"\r\n") < 2 or len(buf) < int(buf[1:buf.index(b"\r\n")]) + 5:
    buf += s.recv(65536)
for line in buf.decode().splitlines():
    if line.startswith("cmdstat_info:"):
        f = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
        print(f"\nINFO on the server: {f['calls']} calls, {float(f['usec_per_call']):.1f} µs per call "
              f"(about one call per second of each test with server stats, plus 4 per test): "
              f"{float(f['usec_per_call']) / 1e4:.4f}% of one second of server time per call")
PY

