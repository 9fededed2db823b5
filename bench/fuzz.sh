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
# Needs python3 and /usr/bin/time (GNU time) for the RSS column (else "-").
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-100000}"
if [ -z "${RESPBENCH:-}" ]; then
  cargo build --release --quiet
  RESPBENCH="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/respbench"
fi
servers=()
[ -n "${RESPBENCH_VALKEY_SERVER:-}" ] && servers+=("valkey:$RESPBENCH_VALKEY_SERVER")
command -v redis-server >/dev/null && servers+=("redis:$(command -v redis-server)")

tmp="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
printf '%-7s %-36s %8s %8s %10s %-9s %s\n' server mode commands seconds 'cmd/s' verdict 'rss(MiB)'
for s in "${servers[@]}"; do
  name="${s%%:*}" bin="${s#*:}"
  for mode in valid malformed-commands config-commands malformed-commands,config-commands; do
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    # A fresh data directory per run: the fuzzer sends SAVE, and Redis cannot load Valkey's RDB.
    data="$tmp/data-$name-$mode"
    mkdir -p "$data"
    rm -f "$tmp/run.json"
    "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$data" >"$tmp/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
      python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
      sleep 0.05
    done
    args=(-p "$port" -c 20 -n "$N" --fuzz --fuzz-loglevel error --seed 1 --json "$tmp/run.json")
    [ "$mode" != valid ] && args+=(--fuzz-mode "$mode")
    rss=-
    if [ -x /usr/bin/time ]; then
      /usr/bin/time -f '%M' -o "$tmp/rss" "$RESPBENCH" "${args[@]}" >/dev/null || true
      rss=$(( $(tail -1 "$tmp/rss") / 1024 ))
    else
      "$RESPBENCH" "${args[@]}" >/dev/null || true
    fi
    python3 - "$tmp/run.json" "$name" "$mode" "$rss" <<'PY'
import json, sys
try:
    f = json.load(open(sys.argv[1]))["fuzz"]
except (OSError, ValueError, KeyError):
    print(f"{sys.argv[2]:<7} {sys.argv[3]:<36} (no record: the run failed)")
    sys.exit(0)
print(f"{sys.argv[2]:<7} {sys.argv[3]:<36} {f['commands_sent']:>8} {f['seconds']:>8.2f} "
      f"{f['commands_per_sec']:>10.0f} {f['verdict']:<9} {sys.argv[4]}")
PY
    kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    pid=""
  done
done
