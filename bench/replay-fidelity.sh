#!/usr/bin/env bash
# Replay fidelity and MONITOR's cost (issue 25), on a throwaway server on a free loopback port.
#
# 1. Fidelity: a generated trace (SECONDS s; 20 clients; a steady base rate with a burst every
#    2 s and a 1 s silence in the middle) replayed with `respbench replay` at 1x and 2x. For each
#    speed: the wall time against span/speed, the slip (max, and the median of the per-second
#    maxima), and the per-second sends against the per-second due counts (the largest
#    difference in any second). Wall-clock fidelity is shown here, never asserted in CI.
# 2. MONITOR's cost: the same closed-loop benchmark (SET/GET, -P 1 and -P 16) without and with a
#    `respbench capture` attached, so the throughput lost to MONITOR is measured, not guessed.
#
# The server (pinned to CPU 0, respbench unpinned) is stopped by its PID on exit (bench/lib.sh).
# Results go to stdout as a Markdown table.
set -euo pipefail

SERVER="${SERVER:-${RESPBENCH_VALKEY_SERVER:-valkey-server}}"
SECONDS_SPAN="${SPAN:-20}"
RATE="${RATE:-2000}"
N="${N:-300000}"
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_respbench
bench_start_server "$(command -v "$SERVER" || echo "$SERVER")"

# The trace: valkey-cli monitor's text, so any reader can check it.
python3 - "$BENCH_TMP/t.trace" "$SECONDS_SPAN" "$RATE" <<'EOF'
import random, sys
path, span, rate = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
random.seed(7)
t, out, i = 0.0, [], 0
while t < span:
    burst = int(t) % 2 == 0 and (t % 1.0) < 0.1
    quiet = span / 2 <= t < span / 2 + 1
    r = rate * (5 if burst else 1)
    t += random.expovariate(r)
    if quiet or t >= span:
        continue
    c = random.randrange(20)
    cmd = '"SET" "key:%d" "v"' % random.randrange(10000) if i % 3 == 0 else '"GET" "key:%d"' % random.randrange(10000)
    out.append('%.6f [0 127.0.0.1:%d] %s' % (1_700_000_000 + t, 40000 + c, cmd))
    i += 1
open(path, "w").write("\n".join(out) + "\n")
print("trace: %d commands over %.1f s" % (len(out), span), file=sys.stderr)
EOF

echo "| speed | commands | span/speed (s) | wall (s) | max slip (ms) | median per-second max slip (ms) | largest per-second sent-due difference |"
echo "|---|---|---|---|---|---|---|"
for speed in 1 2; do
  start=$(date +%s.%N)
  "$RESPBENCH" replay -p "$PORT" --speed "$speed" -q --json "$BENCH_TMP/r$speed.json" "$BENCH_TMP/t.trace" >/dev/null
  end=$(date +%s.%N)
  python3 - "$BENCH_TMP/r$speed.json" "$speed" "$start" "$end" <<'EOF'
import json, statistics, sys
doc = json.load(open(sys.argv[1])); speed = float(sys.argv[2])
r = doc["replay"]; secs = r["seconds"]
wall = float(sys.argv[4]) - float(sys.argv[3])
diff = max(abs(s["sent"] - s["due"]) for s in secs)
med = statistics.median(s["slip_max_ms"] for s in secs if s["sent"])
print("| %gx | %d | %.2f | %.2f | %.3f | %.3f | %d |" % (
    speed, r["sent"], r["span_s"] / speed, wall, r["max_slip_ms"], med, diff))
EOF
done

echo
echo "| benchmark | without MONITOR (req/s) | with respbench capture (req/s) | lost |"
echo "|---|---|---|---|"
for p in 1 16; do
  rps() {
    "$RESPBENCH" -p "$PORT" -t set,get -n "$N" -P "$p" -c 50 --csv |
      awk -F, 'NR>1 {gsub(/"/,"",$2); s+=$2; n++} END {printf "%.0f", s/n}'
  }
  without=$(rps)
  "$RESPBENCH" capture -p "$PORT" -o "$BENCH_TMP/cap.trace" --max-backlog 1024 2>/dev/null &
  CAP=$!
  sleep 0.5
  with=$(rps)
  kill -INT "$CAP"; wait "$CAP" || true
  python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print('| set,get -P %s -c 50 | %.0f | %.0f | %.0f%% |' % (sys.argv[3], a, b, 100*(1-b/a)))" "$without" "$with" "$p"
done
