#!/usr/bin/env bash
# Quick start: build respbench, start a throwaway redis-server on a free loopback port (installing
# Debian's package if needed), run the default suite against it, and stop the server.
# Extra arguments are passed to respbench, e.g.: bash scripts/quickstart.sh -q -n 20000
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ensure-redis.sh
ensure_redis

cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/respbench"

port=$(free_port)
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$dir" >"$dir/server.log" 2>&1 &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
echo "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on 127.0.0.1:$port" >&2
"$bin" -p "$port" "$@"
