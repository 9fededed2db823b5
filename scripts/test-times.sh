#!/usr/bin/env bash
# Where the integration tests' time goes: runs the integration test program (all of it, or the
# tests matching the filters given) with libtest's per-test times, and prints the costliest tests
# and the time per module. Test times are each test's own wall time (a test waiting on a lock or
# on a CPU another test holds counts that wait), so on a loaded machine read the ranking, not
# the seconds.
#
# Usage: scripts/test-times.sh [FILTER…]   (TOP=N for more rows; RUST_TEST_THREADS as libtest)
# The per-test times are libtest's unstable `--report-time`, enabled on a stable toolchain with
# RUSTC_BOOTSTRAP=1 for this run only.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Valkey tests' server (a no-op when it is there already).
. scripts/ensure-valkey.sh
ensure_valkey
bin=$(cargo test --test integration --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "integration" and m.get("executable"):
        print(m["executable"])')
out=$(mktemp /tmp/respbench-test-times.XXXXXX)
trap 'rm -f "$out"' EXIT
status=0
RUSTC_BOOTSTRAP=1 "$bin" -Z unstable-options --format json --report-time "$@" >"$out" || status=$?
python3 - "$out" "${TOP:-25}" <<'PY'
import collections, json, sys

rows = []
for line in open(sys.argv[1], encoding="utf-8"):
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    if d.get("type") == "test" and "exec_time" in d:
        rows.append((d["exec_time"], d["name"], d["event"]))
    elif d.get("type") == "suite" and "exec_time" in d:
        print(f"{d['passed']} passed, {d['failed']} failed in {d['exec_time']:.0f} s (wall)")
rows.sort(reverse=True)
print(f"{sum(r[0] for r in rows):.0f} s of test time over {len(rows)} tests; the costliest:")
for t, name, event in rows[: int(sys.argv[2])]:
    print(f"{t:7.1f} s  {name}{'' if event == 'ok' else '  (' + event + ')'}")
modules = collections.Counter()
for t, name, _ in rows:
    modules[name.split("::")[0]] += t
print("per module:")
for m, t in modules.most_common(int(sys.argv[2])):
    print(f"{t:7.1f} s  {m}")
PY
exit "$status"
