#!/usr/bin/env bash
# How well `respbench ab` answers on this machine under CPU hogs on both cores (issue 36), beside
# separate `--repeat` runs and `compare`:
#   - A/A: the same server on both sides; the false-positive rate is the share of runs whose
#     throughput verdict is better or worse (target: at most 5 %);
#   - a real 10 % change: B's every request costs ~10 % more server time (a Lua loop of 55,000
#     against 50,000 steps per call, where the loop dominates a call's cost); detection is the
#     share of runs reading `worse` (target: at least 80 %).
# Each at the default rounds (10 pairs of 2 s blocks), TRIALS times; then the same two questions
# asked of `respbench --repeat 3` per side run one after the other and `respbench compare`.
#
# Usage: bash bench/ab-quality.sh [TRIALS]   (default 20; about 2 minutes per ab trial;
#        ONLY=repeat for the separate runs alone)
# Needs: redis-server (or RESPBENCH_SERVER=path/to/valkey-server), taskset, python3.
set -euo pipefail
cd "$(dirname "$0")/.."

TRIALS=${1:-20}
SERVER=${RESPBENCH_SERVER:-redis-server}
BIN=${RESPBENCH_BIN:-target/release/respbench}
[ -x "$BIN" ] || cargo build --release --quiet
OUT=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$OUT"; }
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$SERVER" --port "$PORT" --save '' --appendonly no >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
# The hogs: one busy loop pinned to each core, for as long as the script runs.
for cpu in 0 1; do
  taskset -c "$cpu" python3 -c 'while True: pass' &
  PIDS+=($!)
done

lua() { echo "EVAL \"local i = 0 while i < $1 do i = i + 1 end return i\" 0"; }
# The separate runs need one command text on both sides (compare pairs tests by name), so
# their loop reads its step count from a key that each side sets before its runs.
LOOP=(EVAL "local n = tonumber(redis.call('get', KEYS[1])) local i = 0 while i < n do i = i + 1 end return i" 1 steps)
loop() { redis-cli -p "$PORT" set steps "$1" >/dev/null; }
verdict() { # record test metric -> the verdict word
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(next(v["verdict"] for v in d["ab"]["verdicts"] if v["metric"]==sys.argv[2]))' "$1" "$2"
}

any_finding() { # record -> 1 when any test and metric reads better or worse
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(int(any(v["verdict"] in ("better","worse") for v in d["ab"]["verdicts"])))' "$1"
}

ab_aa_fp=0 ab_aa_any=0 ab_detect=0 ab_detect_cpu=0 rep_aa_fp=0 rep_detect=0
for t in $(seq 1 "$TRIALS"); do
  if [ "${ONLY:-}" != repeat ]; then
  "$BIN" ab -p "$PORT" -t get -c 4 --seed "$t" --a '' --b '' --json "$OUT/aa.json" >/dev/null 2>&1 || true
  case $(verdict "$OUT/aa.json" rps) in better|worse) ab_aa_fp=$((ab_aa_fp + 1)) ;; esac
  ab_aa_any=$((ab_aa_any + $(any_finding "$OUT/aa.json")))
  "$BIN" ab -p "$PORT" -c 2 --seed "$t" --a "-- $(lua 50000)" --b "-- $(lua 55000)" \
    --json "$OUT/ten.json" >/dev/null 2>&1 || true
  [ "$(verdict "$OUT/ten.json" rps)" = worse ] && ab_detect=$((ab_detect + 1))
  [ "$(verdict "$OUT/ten.json" cpu_us)" = worse ] && ab_detect_cpu=$((ab_detect_cpu + 1))
  fi
  # Separate runs: A's three repetitions, then B's, then compare (exit 1 = a finding past 0 %).
  "$BIN" -p "$PORT" -t get -c 4 --duration 2 --repeat 3 -q --json "$OUT/a.json" >/dev/null 2>&1
  "$BIN" -p "$PORT" -t get -c 4 --duration 2 --repeat 3 -q --json "$OUT/b.json" >/dev/null 2>&1
  "$BIN" compare "$OUT/a.json" "$OUT/b.json" --metrics rps --format json >"$OUT/aa-cmp.json" 2>/dev/null || true
  grep -q '"finding"' "$OUT/aa-cmp.json" && rep_aa_fp=$((rep_aa_fp + 1))
  loop 50000
  "$BIN" -p "$PORT" -c 2 --duration 2 --repeat 3 -q --json "$OUT/a.json" -- "${LOOP[@]}" >/dev/null 2>&1 || true
  loop 55000
  "$BIN" -p "$PORT" -c 2 --duration 2 --repeat 3 -q --json "$OUT/b.json" -- "${LOOP[@]}" >/dev/null 2>&1 || true
  "$BIN" compare "$OUT/a.json" "$OUT/b.json" --metrics rps --fail-if-worse 0 >/dev/null 2>&1 && rc=0 || rc=$?
  [ "$rc" = 1 ] && rep_detect=$((rep_detect + 1))
  echo "trial $t: ab A/A fp $ab_aa_fp (any metric $ab_aa_any), ab 10% found $ab_detect (cpu/req $ab_detect_cpu); repeat A/A fp $rep_aa_fp, repeat 10% found $rep_detect"
done
echo
echo "$(date -u +%F) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$SERVER" --version | head -c 60)"
printf '%-28s %10s %10s\n' "" "ab" "--repeat 3"
printf '%-28s %9s%% %9s%%\n' "A/A false positives" \
  $((100 * ab_aa_fp / TRIALS)) $((100 * rep_aa_fp / TRIALS))
printf '%-28s %9s%% %10s\n' "A/A: any metric better/worse" $((100 * ab_aa_any / TRIALS)) "-"
printf '%-28s %9s%% %9s%%\n' "10% change found (worse)" \
  $((100 * ab_detect / TRIALS)) $((100 * rep_detect / TRIALS))
printf '%-28s %9s%% %10s\n' "  on server CPU per request" $((100 * ab_detect_cpu / TRIALS)) "-"
