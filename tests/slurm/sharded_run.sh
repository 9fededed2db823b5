#!/usr/bin/env bash
# The Slurm recipe, run for real: one redis-server on loopback, `srun -n 4` respbench shards (each
# learns its shard from SLURM_PROCID/SLURM_NTASKS), `respbench merge`, then checks:
#  - the merged record's completed requests equal -n, and the sum of the shards';
#  - the server saw exactly -n SETs and holds exactly -r keys (the shards' --sequential slices are
#    disjoint and cover the keyspace);
#  - every shard record says its shard came from Slurm, the four indices are 0..3, and they
#    started within a second of each other (--start-at);
#  - every record, merged included, passes tests/record/check_record.py (schema, HDR decoding).
#
# Usage: tests/slurm/sharded_run.sh [RESPBENCH]   (default: target/debug/respbench)
# Needs root on a Debian machine (scripts/slurm-local.sh installs slurm-wlm and munge); run by
# scripts/test.sh after the Rust tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
bin=$(realpath "${1:-target/debug/respbench}")
requests=20000
keys=1000
shards=4

work=$(mktemp -d /tmp/respbench-slurm.XXXXXX)
redis_pid=""
cleanup() {
    [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done

# Every shard gets the same start instant, taken once the cluster is up (a few seconds ahead:
# srun's launch of the four tasks fits in it).
started=$(date +%s.%N)
export bin port requests keys shards work
"$repo/scripts/slurm-local.sh" bash -c '
    exec srun -n "$shards" --overcommit --chdir "$work" --kill-on-bad-exit=1 --time=5 \
        "$bin" -h 127.0.0.1 -p "$port" -n "$requests" -r "$keys" --sequential -t set -q \
        --no-server-stats --start-at "$(($(date +%s) + 3))" --json "$work/out-{shard}.json"' \
    >"$work/srun.out" 2>"$work/srun.err" || {
    echo "sharded_run.sh: srun failed" >&2
    cat "$work/srun.out" "$work/srun.err" >&2
    exit 1
}
"$bin" merge -o "$work/all.json" "$work"/out-*.json 2>"$work/merge.err" || {
    cat "$work/merge.err" >&2
    exit 1
}

calls=$(redis-cli -p "$port" info commandstats | tr -d '\r' | sed -n 's/^cmdstat_set:calls=\([0-9]*\),.*/\1/p')
dbsize=$(redis-cli -p "$port" dbsize | tr -d '\r')
python3 - "$work" "$requests" "$keys" "$shards" "$calls" "$dbsize" <<'PY'
import glob, json, sys
from datetime import datetime

work, requests, keys, shards, calls, dbsize = sys.argv[1], *map(int, sys.argv[2:])
problems = []
def expect(ok, what):
    if not ok:
        problems.append(what)

merged = json.load(open(f"{work}/all.json"))
parts = [json.load(open(p)) for p in sorted(glob.glob(f"{work}/out-*.json"))]
done = lambda d: d["tests"][0]["requests"]["completed"]
expect(len(parts) == shards, f"{len(parts)} shard records, expected {shards}")
expect(done(merged) == requests, f"merged completed {done(merged)} != -n {requests}")
expect(sum(map(done, parts)) == done(merged), "merged completed != sum of the shards'")
expect(calls == requests, f"server SET calls {calls} != {requests}")
expect(dbsize == keys, f"server keys {dbsize} != -r {keys} (slices not disjoint/covering)")
expect(sorted(p["shard"]["index"] for p in parts) == list(range(shards)), "shard indices")
for p in parts:
    s = p["shard"]
    expect(s["source"] == "slurm", f"shard {s['index']} source {s['source']!r}, not slurm")
    expect(s["count"] == shards, f"shard {s['index']} count {s['count']}")
expect(merged["options"]["requests"] == requests, "merged options.requests")
expect(len(merged["shards"]) == shards, "merged shards rows")
starts = [datetime.fromisoformat(p["shard"]["started_at"].replace("Z", "+00:00")).timestamp()
          for p in parts]
expect(max(starts) - min(starts) < 1.0, f"shards started {max(starts) - min(starts):.3f} s apart")
for m in problems:
    print("sharded_run.sh:", m, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
python3 tests/record/check_record.py docs/record.schema.json "$work"/out-*.json "$work/all.json"
end=$(date +%s.%N)
echo "Slurm sharded run: $shards shards, $requests requests, merged exactly ($(python3 -c "print(f'{$end - $started:.1f}')") s)"
cat "$work/merge.err"
