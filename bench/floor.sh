#!/usr/bin/env bash
# respbench beside the floor (bench/floor.c: pre-encoded SETs, one send and one receive per batch,
# nothing else) and the reference client (valkey-benchmark, else redis-benchmark) against one
# pinned server: client CPU per request and the ratios respbench / floor and respbench / reference
# at -P 1 and -P 16, interleaved reps; optionally user-space instructions per request (callgrind).
# See bench/README.md ("The floor").
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: bash bench/floor.sh [OPTIONS]

Starts a throwaway server (redis-server, or valkey-server with --server valkey-server) pinned to
CPU 0 on a free loopback port, then for each rep and each pipeline (-P 1, -P 16) runs the floor
client, respbench and the reference client back to back (the order rotates every rep), all
pinned to CPU 1, with the same connections and requests: SET of a 16-byte key and a 3-byte value.
Prints each run's client CPU (user + system from wait4's rusage) per request and, per pipeline,
the median ratios respbench / floor and respbench / reference over the reps, and the load
average before and after (the machine's load is part of the result). The server is stopped by
its PID on exit.

Options (environment variable in brackets):
  -n N            requests per run at -P 1 (at -P 16: 8 * N)   [N, default 500000]
  -r R            interleaved reps                              [REPS, default 5]
  -c C            connections                                   [CLIENTS, default 50]
  --server PATH   redis-server or valkey-server binary          [SERVER, default redis-server]
  --respbench P   respbench binary (default: cargo build --release, then the target dir's)
  --reference P   the reference client: valkey-benchmark or redis-benchmark (default: the
                  first of the two on PATH; "none" leaves it out)  [REFERENCE]
  --callgrind     also count user-space instructions per request with callgrind (marginal:
                  (runs of 2M minus M requests) / M, so start-up cancels out; M = CG_N,
                  default 20000 at -P 1 and 80000 at -P 16)
  -h, --help      this help
EOF
}

. "$(dirname "$0")/lib.sh"
die() { bench_die "$@"; }
ROOT="$BENCH_ROOT"
TMP="$BENCH_TMP"

N="${N:-500000}"
REPS="${REPS:-5}"
CLIENTS="${CLIENTS:-50}"
SERVER="${SERVER:-redis-server}"
RESPBENCH="${RESPBENCH:-}"
REFERENCE="${REFERENCE:-}"
CALLGRIND=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    -r) REPS="$2"; shift 2 ;;
    -c) CLIENTS="$2"; shift 2 ;;
    --server) SERVER="$2"; shift 2 ;;
    --respbench) RESPBENCH="$2"; shift 2 ;;
    --reference) REFERENCE="$2"; shift 2 ;;
    --callgrind) CALLGRIND=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

command -v "$SERVER" >/dev/null || die "$SERVER not found"
command -v cc >/dev/null || die "cc not found (the floor client is C)"
cc -O2 -o "$TMP/floor" "$ROOT/bench/floor.c" || die "building bench/floor.c failed"
bench_respbench
if [ -z "$REFERENCE" ]; then
  REFERENCE="$(command -v valkey-benchmark || command -v redis-benchmark || echo none)"
fi
[ "$REFERENCE" = none ] || command -v "$REFERENCE" >/dev/null || die "no reference client $REFERENCE"

bench_start_server "$(command -v "$SERVER")"

# Runs "$@" pinned to the clients' CPU; prints its user+system CPU seconds (wait4's rusage).
cpu_of() { bench_cpu /dev/null "${PIN_CLIENT[@]}" "$@"; }

floor_cmd() { echo "$TMP/floor 127.0.0.1 $PORT $CLIENTS $1 $2"; }
respbench_cmd() {
  echo "$RESPBENCH -h 127.0.0.1 -p $PORT -c $CLIENTS -P $1 -n $2 -r 100000 -t set -q"
}
# The same options: valkey-benchmark and redis-benchmark take respbench's (it is their drop-in).
reference_cmd() {
  echo "$REFERENCE -h 127.0.0.1 -p $PORT -c $CLIENTS -P $1 -n $2 -r 100000 -t set -q"
}
TOOLS=(floor respbench)
[ "$REFERENCE" = none ] || TOOLS+=(reference)

echo "# respbench beside the floor ($(date -u +%Y-%m-%dT%H:%MZ), $(git -C "$ROOT" rev-parse --short HEAD))"
echo
echo "server: $("$SERVER" --version | cut -d" " -f1-3); $PINNING; -c $CLIENTS, SET, 3-byte values"
echo "reference: $REFERENCE; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| P | rep | floor µs/req | respbench µs/req | reference µs/req | respbench / floor | respbench / reference |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
declare -A RATIOS REF_RATIOS
for rep in $(seq "$REPS"); do
  for p in 1 16; do
    n="$N"; [ "$p" = 16 ] && n=$((N * 8))
    declare -A CPU=([reference]=0)
    # The order rotates, so no tool always runs first (or right after another).
    for k in "${!TOOLS[@]}"; do
      t="${TOOLS[$(((k + rep + p) % ${#TOOLS[@]}))]}"
      # shellcheck disable=SC2046
      CPU[$t]="$(cpu_of $("${t}_cmd" "$p" "$n"))"
    done
    line="$(python3 -c "
f, r, b, n = ${CPU[floor]}, ${CPU[respbench]}, ${CPU[reference]}, $n
print(f'{f/n*1e6:.3f} {r/n*1e6:.3f} {b/n*1e6:.3f} {r/f:.3f} {r/b if b else 0:.3f}')")"
    read -r fu ru bu ratio bratio <<<"$line"
    echo "| $p | $rep | $fu | $ru | $bu | $ratio | $bratio |"
    RATIOS[$p]="${RATIOS[$p]:-} $ratio"
    REF_RATIOS[$p]="${REF_RATIOS[$p]:-} $bratio"
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() {
  python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f'{statistics.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f})')" "$@"
}
for p in 1 16; do
  # shellcheck disable=SC2086
  echo "-P $p: median ratio respbench / floor $(median ${RATIOS[$p]})"
  # shellcheck disable=SC2086
  [ "$REFERENCE" = none ] || echo "-P $p: median ratio respbench / reference $(median ${REF_RATIOS[$p]})"
done

if [ "$CALLGRIND" = 1 ]; then
  command -v valgrind >/dev/null || die "valgrind not found"
  # Total user-space instructions of one run under callgrind (every thread).
  instr_of() {
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$@" >/dev/null 2>"$TMP/cg.err" \
      || die "callgrind run failed: $* (see $TMP/cg.err)"
    awk '/^(summary|totals):/ {print $2; exit}' "$TMP/cg.out"
  }
  echo
  echo "| P | floor instr/req | respbench instr/req | respbench − floor | reference instr/req |"
  echo "|---:|---:|---:|---:|---:|"
  for p in 1 16; do
    m="${CG_N:-}"; [ -z "$m" ] && { m=20000; [ "$p" = 16 ] && m=80000; }
    # shellcheck disable=SC2046
    f1="$(instr_of $(floor_cmd "$p" "$m"))"; f2="$(instr_of $(floor_cmd "$p" $((2 * m))))"
    # shellcheck disable=SC2046
    r1="$(instr_of $(respbench_cmd "$p" "$m"))"; r2="$(instr_of $(respbench_cmd "$p" $((2 * m))))"
    b1=0 b2=0
    if [ "$REFERENCE" != none ]; then
      # shellcheck disable=SC2046
      b1="$(instr_of $(reference_cmd "$p" "$m"))"; b2="$(instr_of $(reference_cmd "$p" $((2 * m))))"
    fi
    python3 -c "f=($f2-$f1)/$m; r=($r2-$r1)/$m; b=($b2-$b1)/$m; print(f'| $p | {f:,.0f} | {r:,.0f} | {r-f:,.0f} | {b:,.0f} |')"
  done
fi
