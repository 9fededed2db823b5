#!/usr/bin/env bash
# A mode's client cost per operation beside the engine's for the same commands (issue 33 item 6):
# a replayed command against a benchmark request (the same SETs), and a delivered pub/sub
# message against a GET. Two measures, each per operation:
#
#   - user-space instructions (valgrind --tool=callgrind, every thread), marginal between runs of
#     M and 2M operations so start-up cancels out: deterministic, so it reads the same on a
#     loaded machine. The main measure.
#   - client CPU (user + system from wait4's rusage, start-up included), interleaved reps, the
#     median with its spread: the kernel's part too, but noisy on a shared machine.
#
#   bash bench/mode-cost.sh                       # both measures
#   bash bench/mode-cost.sh --no-cpu              # callgrind only (a loaded machine)
#   CG_N=20000 N=200000 REPS=5 bash bench/mode-cost.sh
#
# The cases (-c 50 clients, 3-byte values, SET of a 16-byte key):
#   replay --speed max   a trace of N SETs from 50 clients (valkey-cli monitor text), every
#                        command sent as soon as it can (up to 1,024 in flight per connection)
#   engine SET -P 16     the same SETs from the engine's 50 connections, 16 in flight each
#   engine SET -P 1      the same, one in flight (the replay at its trace's pace is closer to
#                        this; a paced replay's CPU is mostly its wake-ups)
#   pubsub delivery      --pubsub 10: one publisher, 10 subscribers; per message delivered (32
#                        bytes: the least a message carries, its send time and number)
#   engine GET -P 1/16   GETs of existing keys from 50 connections
#
# Starts its own redis-server (or SERVER=path) on a free loopback port, pinned to CPU 0 with
# respbench on CPU 1 when there are two, and stops it by PID on exit (bench/lib.sh;
# RESPBENCH=path skips the build). Prints Markdown tables.
set -euo pipefail

N="${N:-200000}"
REPS="${REPS:-5}"
CG_N="${CG_N:-20000}"
SUBS="${SUBS:-10}"
CPU=1
CALLGRIND=1
while [ "$#" -gt 0 ]; do
  case "$1" in
    --no-cpu) CPU=0; shift ;;
    --no-callgrind) CALLGRIND=0; shift ;;
    -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mode-cost.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
SERVER="${SERVER:-$(command -v redis-server || true)}"
. "$(dirname "$0")/lib.sh"
bench_respbench
bench_start_server "$SERVER"

# A trace of $1 SETs of key:<12 digits> with a 3-byte value from 50 clients, 10 µs apart, as
# valkey-cli monitor prints them (any reader can check it).
make_trace() {
  python3 - "$1" "$2" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    for i in range(n):
        t = 1_700_000_000 + i * 1e-5
        f.write('%.6f [0 127.0.0.1:%d] "SET" "key:%012d" "xxx"\n' % (t, 40000 + i % 50, (i * 7919) % 100000))
PY
}

# The arguments of each case for `$1` operations (the pub/sub case publishes $1 / SUBS messages,
# each delivered to SUBS subscribers).
args_of() {
  local case="$1" n="$2"
  case "$case" in
    replay) echo "replay -p $PORT --speed max -q $BENCH_TMP/t$n.trace" ;;
    set1) echo "-p $PORT -c 50 -P 1 -n $n -r 100000 -d 3 -t set -q" ;;
    set16) echo "-p $PORT -c 50 -P 16 -n $n -r 100000 -d 3 -t set -q" ;;
    pubsub) echo "-p $PORT --pubsub $SUBS -n $((n / SUBS)) -d 32 -q" ;;
    get1) echo "-p $PORT -c 50 -P 1 -n $n -r 100000 -t get -q" ;;
    get16) echo "-p $PORT -c 50 -P 16 -n $n -r 100000 -t get -q" ;;
  esac
}
CASES=(replay set16 set1 pubsub get16 get1)
declare -A LABEL=(
  [replay]="replay --speed max (per replayed SET)"
  [set16]="engine SET -P 16 (per request)"
  [set1]="engine SET -P 1 (per request)"
  [pubsub]="--pubsub $SUBS (per delivered message)"
  [get16]="engine GET -P 16 (per request)"
  [get1]="engine GET -P 1 (per request)"
)

# Every GET finds its key, whatever ran before.
"$RESPBENCH" -p "$PORT" -c 50 -P 16 -n 100000 -r 100000 -d 3 -t set --sequential -q >/dev/null
for n in "$CG_N" $((2 * CG_N)) "$N"; do make_trace "$n" "$BENCH_TMP/t$n.trace"; done

echo "# A mode's cost per operation beside the engine's ($(date -u +%Y-%m-%dT%H:%MZ), $(git -C "$BENCH_ROOT" rev-parse --short HEAD))"
echo
echo "server: $("$SERVER" --version | cut -d" " -f1-3); $PINNING; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

declare -A INSTR
if [ "$CALLGRIND" = 1 ]; then
  command -v valgrind >/dev/null || bench_die "valgrind not found (or run with --no-callgrind)"
  # Total user-space instructions of one run under callgrind (every thread).
  instr_of() {
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --callgrind-out-file="$BENCH_TMP/cg.out" "$RESPBENCH" $(args_of "$1" "$2") \
      >/dev/null 2>"$BENCH_TMP/cg.err" || bench_die "callgrind run failed: $1 $2 (see $BENCH_TMP/cg.err)"
    awk '/^(summary|totals):/ {print $2; exit}' "$BENCH_TMP/cg.out"
  }
  echo "User-space instructions per operation (callgrind, every thread, marginal between $CG_N and $((2 * CG_N)) operations):"
  echo
  echo "| case | instructions per operation |"
  echo "|---|---:|"
  for c in "${CASES[@]}"; do
    a="$(instr_of "$c" "$CG_N")"
    b="$(instr_of "$c" $((2 * CG_N)))"
    INSTR[$c]="$(python3 -c "print(round(($b - $a) / $CG_N))")"
    python3 -c "import sys; print(f'| {sys.argv[1]} | {int(sys.argv[2]):,} |')" "${LABEL[$c]}" "${INSTR[$c]}"
  done
  echo
  python3 - "${INSTR[replay]}" "${INSTR[set16]}" "${INSTR[set1]}" "${INSTR[pubsub]}" "${INSTR[get16]}" "${INSTR[get1]}" <<'PY'
import sys
r, s16, s1, p, g16, g1 = map(float, sys.argv[1:])
print(f"instructions: replay / SET -P 16 {r / s16:.2f}, replay / SET -P 1 {r / s1:.2f}; "
      f"delivery / GET -P 16 {p / g16:.2f}, delivery / GET -P 1 {p / g1:.2f}")
PY
  echo
fi

if [ "$CPU" = 1 ]; then
  echo "Client CPU per operation (user + system, µs; $REPS interleaved reps of $N operations, start-up included; median, min – max):"
  echo
  declare -A VALS
  for rep in $(seq "$REPS"); do
    # The order rotates, so no case always runs first.
    for k in "${!CASES[@]}"; do
      c="${CASES[$(((k + rep) % ${#CASES[@]}))]}"
      # shellcheck disable=SC2046
      cpu="$(bench_cpu /dev/null "${PIN_CLIENT[@]}" "$RESPBENCH" $(args_of "$c" "$N"))"
      VALS[$c]="${VALS[$c]:-} $(python3 -c "print($cpu * 1e6 / $N)")"
    done
  done
  echo "| case | client CPU µs per operation |"
  echo "|---|---:|"
  for c in "${CASES[@]}"; do
    # shellcheck disable=SC2086
    python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[2:]]; print(f'| {sys.argv[1]} | {statistics.median(v):.2f} ({min(v):.2f} – {max(v):.2f}) |')" "${LABEL[$c]}" ${VALS[$c]}
  done
  echo
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
