#!/usr/bin/env bash
# Does `--find-max` give the same answer twice? Three searches per case against a throwaway
# Valkey and Redis pinned to one core (respbench on another), and a Markdown table of the answers
# and their spread. Results: docs/find-max.md ("Does it hold on a second run?").
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: bash bench/find-max-agreement.sh [OPTIONS]

For each server (Valkey 9.1 and Debian's redis-server) and each case, runs `respbench
--find-max` RUNS times and prints each answer, how the search ended, its windows, and the
spread: the largest distance of an answer from the runs' median, in percent. Cases:

  server-bound  -c 16, p99<100ms on an EVAL of a Lua busy loop (~0.3 ms of server time per
                call): the server's single thread is the limit. Target: within ±10%.
  tight-slo     -c 50 -r 100000, p99<1ms on GET (TIGHT_SLO to change): latency on a shared
                machine is the limit. Target: within ±20%.

Options (environment variable in brackets):
  --runs N           searches per case                              [RUNS, default 3]
  --step S           --step-duration of each window, seconds        [STEP, default 1]
  --warmup S         --warmup before each window, seconds           [WARMUP, default 0.5]
  --servers LIST     comma-separated, of valkey, redis              [SERVERS, default valkey,redis]
  --cases LIST       comma-separated, of server-bound, tight-slo    [CASES, default both]
  --respbench PATH   use this respbench binary; do not build
  --out FILE         also write the Markdown table to FILE
  -h, --help         this help

The server runs on CPU 0 and respbench on CPU 1 (SERVER_CPU / CLIENT_CPU to change). Valkey is
$RESPBENCH_VALKEY_SERVER or ~/.cache/respbench/valkey-9.1/valkey-server (scripts/ensure-valkey.sh
puts it there). Every search is bounded by `timeout` (RUN_TIMEOUT seconds, default 600); servers
listen on 127.0.0.1 only and are stopped by PID on exit.
EOF
}

. "$(dirname "$0")/lib.sh"
die() { bench_die "$@"; }
info() { bench_info "$@"; }

RUNS="${RUNS:-3}"
STEP="${STEP:-1}"
WARMUP="${WARMUP:-0.5}"
SERVERS="${SERVERS:-valkey,redis}"
CASES="${CASES:-server-bound,tight-slo}"
RESPBENCH="${RESPBENCH_BIN:-${RESPBENCH:-}}"
OUT=""
RUN_TIMEOUT="${RUN_TIMEOUT:-600}"
TIGHT_SLO="${TIGHT_SLO:-p99<1ms}"
VALKEY="${RESPBENCH_VALKEY_SERVER:-$HOME/.cache/respbench/valkey-9.1/valkey-server}"

need_arg() { [ "$#" -ge 2 ] && [ -n "$2" ] || die "option $1 needs a value (see --help)"; }
while [ "$#" -gt 0 ]; do
  case "$1" in
    --runs) need_arg "$@"; RUNS="$2"; shift 2 ;;
    --step) need_arg "$@"; STEP="$2"; shift 2 ;;
    --warmup) need_arg "$@"; WARMUP="$2"; shift 2 ;;
    --servers) need_arg "$@"; SERVERS="$2"; shift 2 ;;
    --cases) need_arg "$@"; CASES="$2"; shift 2 ;;
    --respbench) need_arg "$@"; RESPBENCH="$2"; shift 2 ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

command -v python3 >/dev/null || die "python3 is needed"
cd "$(dirname "$0")/.."
bench_respbench

# start_server NAME: sets PORT; the server is stopped by PID on exit (bench/lib.sh)
start_server() {
  case "$1" in
    valkey) bench_start_server "$VALKEY" ;;
    redis) bench_start_server "$(command -v redis-server || true)" ;;
    *) die "unknown server $1" ;;
  esac
}

# case_args CASE -> the respbench arguments of the search
case_args() {
  case "$1" in
    server-bound) echo "-c 16 --find-max 'p99<100ms' -- eval 'for i=1,30000 do end' 0" ;;
    tight-slo) echo "-c 50 -r 100000 -t get --find-max '$TIGHT_SLO'" ;;
    *) die "unknown case $1" ;;
  esac
}

TMP="$BENCH_TMP"
RESULTS="$TMP/results.tsv"
: >"$RESULTS"
IFS=, read -r -a server_list <<<"$SERVERS"
IFS=, read -r -a case_list <<<"$CASES"
for server in "${server_list[@]}"; do
  start_server "$server"
  port="$PORT"
  info "$server on 127.0.0.1:$port ($PINNING)"
  # Every GET hits.
  "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$port" -q -t set -r 100000 -n 200000 >/dev/null
  for c in "${case_list[@]}"; do
    for run in $(seq "$RUNS"); do
      json="$TMP/$server-$c-$run.json"
      info "$server $c run $run"
      eval "set -- $(case_args "$c")"
      timeout "$RUN_TIMEOUT" "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$port" --json "$json" \
        --step-duration "$STEP" --warmup "$WARMUP" "$@" >"$TMP/$server-$c-$run.txt" 2>&1 || true
      cat "$TMP/$server-$c-$run.txt" >&2
      printf '%s\t%s\t%s\t%s\n' "$server" "$c" "$run" "$json" >>"$RESULTS"
    done
  done
done

python3 - "$RESULTS" "$OUT" "$(nproc)" "$(uptime)" <<'EOF'
import json, statistics, sys

results, out, cores, uptime = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
target = {"server-bound": 10.0, "tight-slo": 20.0}
rows = {}
for line in open(results):
    server, case, run, path = line.rstrip("\n").split("\t")
    try:
        fm = json.load(open(path))["find_max"]
        rows.setdefault((server, case), []).append(
            (fm["answer_rps"], fm["end"], len(fm["steps"])))
    except (OSError, ValueError, KeyError):
        rows.setdefault((server, case), []).append((None, "no record", 0))
lines = [
    f"Machine: {cores} cores; load when the table was made: {uptime.split('load average:')[-1].strip()}",
    "",
    "| server | case | answers (req/s) | how each ended | windows | spread | target |",
    "|---|---|---|---|---|---|---|",
]
for (server, case), runs in rows.items():
    answers = [a for a, _, _ in runs if a is not None]
    if len(answers) == len(runs) and answers:
        med = statistics.median(answers)
        spread = max(abs(a - med) for a in answers) / med * 100
        verdict = "within" if spread <= target[case] else "OUTSIDE"
        spread_s = f"±{spread:.1f}%"
    else:
        spread_s, verdict = "n/a", "no answer in every run"
    lines.append(
        f"| {server} | {case} | {', '.join(f'{a:,.0f}' if a is not None else '-' for a, _, _ in runs)} "
        f"| {', '.join(e for _, e, _ in runs)} | {', '.join(str(w) for _, _, w in runs)} "
        f"| {spread_s} | ±{target[case]:.0f}%: {verdict} |")
text = "\n".join(lines) + "\n"
print(text)
if out:
    open(out, "w").write(text)
EOF
