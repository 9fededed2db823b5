#!/usr/bin/env bash
# The full fuzz of issue 24: valkey's own test-suite invocation (-c 20 -n 100000 --fuzz) in every
# mode, against a throwaway Valkey 9.1 ($RESPBENCH_VALKEY_SERVER) and Redis 7.0 (redis-server),
# each started here and stopped by PID. Prints one line per run: server, mode, commands, seconds,
# commands/s, the verdict, and respbench's peak RSS (memory stays bounded by the buffers, not -n).
# The CI tests run the same modes with -n 4000 (tests/integration/fuzz.rs).
#
#   bash bench/fuzz.sh
#   N=20000 RESPBENCH=target/release/respbench bash bench/fuzz.sh
#
# Needs python3 and /usr/bin/time (GNU time) for the RSS column (else "-"). Servers: bench/lib.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-100000}"
. bench/lib.sh
bench_respbench
servers=()
[ -n "${RESPBENCH_VALKEY_SERVER:-}" ] && servers+=("valkey:$RESPBENCH_VALKEY_SERVER")
command -v redis-server >/dev/null && servers+=("redis:$(command -v redis-server)")

printf '%-7s %-36s %8s %8s %10s %-9s %s\n' server mode commands seconds 'cmd/s' verdict 'rss(MiB)'
for s in "${servers[@]}"; do
  name="${s%%:*}" bin="${s#*:}"
  for mode in valid malformed-commands config-commands malformed-commands,config-commands; do
    # A server per run, with a data directory of its own: the fuzzer sends SAVE, and Redis cannot
    # load Valkey's RDB.
    bench_start_server "$bin"
    rm -f "$BENCH_TMP/run.json"
    args=(-p "$PORT" -c 20 -n "$N" --fuzz --fuzz-loglevel error --seed 1 --json "$BENCH_TMP/run.json")
    [ "$mode" != valid ] && args+=(--fuzz-mode "$mode")
    rss=-
    if [ -x /usr/bin/time ]; then
      /usr/bin/time -f '%M' -o "$BENCH_TMP/rss" "$RESPBENCH" "${args[@]}" >/dev/null || true
      rss=$(( $(tail -1 "$BENCH_TMP/rss") / 1024 ))
    else
      "$RESPBENCH" "${args[@]}" >/dev/null || true
    fi
    python3 - "$BENCH_TMP/run.json" "$name" "$mode" "$rss" <<'PY'
import json, sys
try:
    f = json.load(open(sys.argv[1]))["fuzz"]
except (OSError, ValueError, KeyError):
    print(f"{sys.argv[2]:<7} {sys.argv[3]:<36} (no record: the run failed)")
    sys.exit(0)
print(f"{sys.argv[2]:<7} {sys.argv[3]:<36} {f['commands_sent']:>8} {f['seconds']:>8.2f} "
      f"{f['commands_per_sec']:>10.0f} {f['verdict']:<9} {sys.argv[4]}")
PY
    bench_stop_server "$SERVER_PID"
  done
done
