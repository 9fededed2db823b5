#!/usr/bin/env bash
# Client CPU per request of a 1:10 SET:GET mix (`--ratio 1:10`) against plain GET (`-t get`):
# the mix draws a command per request and times each into its own histogram, and the target
# (issue 12) is that this costs at most 10% more client CPU per request than plain GET.
#
#   bash bench/mix-cost.sh                 # -n 500000, 3 interleaved reps, -P 1 and -P 16
#   N=200000 REPS=1 bash bench/mix-cost.sh
#
# Starts its own redis-server (or valkey-server with SERVER=path) on a free loopback port,
# server pinned to CPU 0 and client to CPU 1 when there are two, and stops it by PID on exit
# (bench/lib.sh; RESPBENCH=path skips the build).
# Client CPU is user + system time from the rusage wait4() returns (all threads), so start-up
# is included (small at these -n). Prints a Markdown table and the ratio mix / GET.
set -euo pipefail

N="${N:-500000}"
REPS="${REPS:-3}"
PIPELINES="${PIPELINES:-1 16}"
KEYSPACE="${KEYSPACE:-100000}"
SERVER="${SERVER:-$(command -v redis-server || true)}"
. "$(dirname "$0")/lib.sh"
bench_respbench
bench_start_server "$SERVER"
# Every GET hits: fill the keyspace once.
"$RESPBENCH" -p "$PORT" -t set -r "$KEYSPACE" -n "$((KEYSPACE * 3))" -P 16 -q >/dev/null

# Runs respbench with the given arguments; prints "cpu_seconds rps".
measure() {
  local cpu
  cpu="$(bench_cpu "$BENCH_TMP/out" "$@")"
  echo "$cpu $(sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' "$BENCH_TMP/out" | tail -n 1)"
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
      read -r cpu rps < <(measure "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$PORT" -r "$KEYSPACE" \
        -n "$N" -P "$P" -c 50 --seed "$rep" -q "${args[@]}")
      CPU[$kind,$P]+="$cpu "
      RPS[$kind,$P]+="$rps "
    done
  done
done
for P in $PIPELINES; do
  for kind in get mix; do
    cpu=$(echo "${CPU[$kind,$P]}" | tr ' ' '\n' | bench_median)
    rps=$(echo "${RPS[$kind,$P]}" | tr ' ' '\n' | bench_median)
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
