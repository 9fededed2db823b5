#!/usr/bin/env bash
# How fast a run's journal (`--json FILE` keeps FILE.partial while it runs) grows: bytes per
# second of test, per hour and per 24 h, and which fields of a `second` line take them.
#
# Each case runs respbench with --json against a throwaway Valkey (or Redis) on a loopback port,
# SIGKILLs it after SECS seconds (the journal is removed when a run ends, so a killed run is the
# way to keep it), and reads the journal that is left: its bytes over the seconds its `second`
# lines cover (a suite's `begin` and `test` lines counted in), the average `second` line and its
# largest fields. Then `respbench recover` reads it back (its wall time and peak memory, from
# /usr/bin/time when present).
#
# Cases: `set` (SET -c 50), `suite` (-t set,get --repeat 3, 5 s each), `cluster` (--cluster over
# three primaries started here with redis-cli --cluster create, -t set). CASES picks them.
#
#   bash bench/journal-size.sh
#   SECS=60 CASES="set cluster" SERVER=/usr/bin/redis-server bash bench/journal-size.sh
#
# Needs python3, and redis-cli for the cluster case. Every server is stopped by its PID on exit
# (bench/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

SECS="${SECS:-30}"
CASES="${CASES:-set suite cluster}"
SERVER="${SERVER:-$HOME/.cache/respbench/valkey-9.1/valkey-server}"
. bench/lib.sh
bench_respbench
[ -x "$SERVER" ] || SERVER="$(command -v redis-server || true)"

# Runs respbench with ARGS and --json, kills it with SIGKILL after $SECS s, leaves the journal in
# $BENCH_TMP/NAME.json.partial.
killed_run() {
  local name="$1"
  shift
  rm -f "$BENCH_TMP/$name.json" "$BENCH_TMP/$name.json.partial"
  ${PIN_CLIENT[@]+"${PIN_CLIENT[@]}"} "$RESPBENCH" "$@" -q --json "$BENCH_TMP/$name.json" \
    >/dev/null 2>"$BENCH_TMP/$name.err" &
  local pid=$!
  # The run's resident memory early and just before the kill: what a long run's process grows by.
  sleep 5
  local rss0 rss1
  rss0="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
  sleep "$((SECS - 5))"
  rss1="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
  kill -9 "$pid" 2>/dev/null || true
  echo "$name: the run's RSS $rss0 kB at 5 s, $rss1 kB at $SECS s" >>"$BENCH_TMP/rss.txt"
  wait "$pid" 2>/dev/null || true
  [ -s "$BENCH_TMP/$name.json.partial" ] || bench_die "$name: no journal left; $(cat "$BENCH_TMP/$name.err")"
}

# Prints the journal's size figures (one table row) and its largest fields.
report() {
  local name="$1" journal="$BENCH_TMP/$1.json.partial"
  python3 - "$name" "$journal" <<'PY'
import json, sys, collections
name, path = sys.argv[1], sys.argv[2]
raw = open(path, 'rb').read()
lines = [l for l in raw.split(b'\n') if l.strip()]
kinds = collections.Counter()
bytes_by_kind = collections.Counter()
fields = collections.Counter()
seconds = 0
for l in lines:
    try:
        v = json.loads(l)
    except ValueError:
        continue  # the line cut short by the kill
    kinds[v['kind']] += 1
    bytes_by_kind[v['kind']] += len(l) + 1
    if v['kind'] == 'second':
        seconds += 1
        for k, x in v.items():
            fields[k] += len(json.dumps(x, separators=(',', ':')))
        for k, x in (v.get('exact') or {}).items():
            fields['exact.' + k] += len(json.dumps(x, separators=(',', ':')))
        for s in v.get('server') or []:
            for k, x in s.items():
                fields['server.' + k] += len(json.dumps(x, separators=(',', ':')))
per_s = len(raw) / max(seconds, 1)
print(f"| {name} | {seconds} | {len(raw):,} | {per_s:,.0f} | {per_s * 3600 / 1e6:,.1f} | {per_s * 86400 / 1e6:,.0f} | {bytes_by_kind['second'] / max(kinds['second'], 1):,.0f} |")
top = ', '.join(f"{k} {n / max(seconds, 1):,.0f}" for k, n in fields.most_common(12))
print(f"|   | fields of a second line (bytes): {top} | | | | | |", file=sys.stderr)
PY
}

# Reads the journal back with recover: wall seconds and peak RSS (kB).
recovered() {
  local journal="$BENCH_TMP/$1.json.partial" out="$BENCH_TMP/$1.recovered.json"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%e s, %M kB peak' "$RESPBENCH" recover "$journal" -o "$out" 2>&1 >/dev/null | tail -1
  else
    "$RESPBENCH" recover "$journal" -o "$out" >/dev/null && echo "recovered"
  fi
}

echo "# journal size ($(date -u +%Y-%m-%dT%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg); $($SERVER --version | head -c 60); killed after ${SECS} s)"
echo
echo "| case | seconds | bytes | bytes/s | MB/h | MB/24 h | average second line |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for c in $CASES; do
  case "$c" in
    set)
      bench_start_server "$SERVER"
      killed_run set -p "$PORT" -c 50 -t set --duration 3600
      ;;
    suite)
      bench_start_server "$SERVER"
      killed_run suite -p "$PORT" -c 50 -t set,get --repeat 3 --duration 5
      ;;
    cluster)
      bench_start_cluster "$SERVER"
      killed_run cluster -p "$PORT" --cluster -c 50 -t set --duration 3600
      ;;
    *) bench_die "unknown case $c (set, suite, cluster)" ;;
  esac
  report "$c" 2>>"$BENCH_TMP/fields.txt"
  echo "$c: recover $(recovered "$c")" >>"$BENCH_TMP/recover.txt"
  for pid in ${BENCH_SERVER_PIDS[@]+"${BENCH_SERVER_PIDS[@]}"}; do bench_stop_server "$pid"; done
done
echo
cat "$BENCH_TMP/fields.txt"
echo
cat "$BENCH_TMP/recover.txt"
cat "$BENCH_TMP/rss.txt"
