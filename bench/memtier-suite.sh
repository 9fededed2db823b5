#!/usr/bin/env bash
# memtier_benchmark's own test suite (RLTest, its tests/*.py) run twice against standalone
# redis-server: with the real memtier_benchmark built in the checkout, then with respbench in
# its place (respbench switches to memtier mode when started as `memtier_benchmark`). Prints
# each run's pass count and the failed tests. Not part of CI: it needs a memtier checkout,
# which this script never fetches.
#
#   bash bench/memtier-suite.sh /path/to/memtier_benchmark-checkout [respbench-binary]
#
# The checkout must hold a built `memtier_benchmark` (autoreconf -ivf && ./configure && make;
# Debian: build-essential autoconf automake libpcre3-dev libevent-dev pkg-config zlib1g-dev
# libssl-dev) and RLTest must be importable (`pip install rltest redis`). The respbench binary
# defaults to target/debug/respbench (`cargo build`). Each run takes a copy of the checkout's
# tests in a temporary directory, so the checkout is not changed; RLTest gets
# --randomize-ports there (other servers on the machine keep their ports). TEST=file.py runs
# one file; TOOLS="respbench" (or "memtier") runs one tool. Results: docs/memtier.md,
# "memtier's own test suite".
#
# One test (test_monitor_random_reproducible_without_randomize) connects to 127.0.0.1:6379
# whatever port RLTest gave its server, so its result depends on whether something answers
# there. Both tools get the same answer: the script starts its own redis-server on 6379 for
# the whole run (and stops it by its PID) when 6379 is free, and refuses to run when another
# process holds 6379 (that test would write keys into it) unless MEMTIER_SUITE_SHARED_6379=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
checkout=${1:?usage: bench/memtier-suite.sh MEMTIER_CHECKOUT [RESPBENCH_BINARY]}
checkout=$(cd "$checkout" && pwd)
respbench=${2:-$here/../target/debug/respbench}
respbench=$(cd "$(dirname "$respbench")" && pwd)/$(basename "$respbench")

for need in "$checkout/tests/run_tests.sh" "$checkout/memtier_benchmark" "$respbench"; do
    [[ -e $need ]] || { echo "memtier-suite: $need is missing" >&2; exit 2; }
done
python3 -c 'import RLTest' 2>/dev/null || {
    echo "memtier-suite: RLTest is not importable: pip install rltest redis" >&2
    exit 2
}
command -v redis-server >/dev/null || { echo "memtier-suite: no redis-server" >&2; exit 2; }

work=$(mktemp -d)
port6379_pid=
cleanup() {
    if [[ -n $port6379_pid ]]; then
        kill "$port6379_pid" 2>/dev/null || true
        wait "$port6379_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# Is something listening on 127.0.0.1:6379? (bash's /dev/tcp: no client tool needed.)
port6379_taken() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }

if port6379_taken; then
    if [[ ${MEMTIER_SUITE_SHARED_6379:-} != 1 ]]; then
        echo "memtier-suite: another process holds 127.0.0.1:6379; one test writes keys there" \
            "whatever its server's port: stop it, or set MEMTIER_SUITE_SHARED_6379=1" >&2
        exit 2
    fi
    echo "== 6379: another process's server (MEMTIER_SUITE_SHARED_6379=1), the same for both tools"
else
    mkdir -p "$work/6379"
    redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no --dir "$work/6379" \
        >"$work/6379/log" 2>&1 &
    port6379_pid=$!
    for _ in $(seq 50); do port6379_taken && break; sleep 0.1; done
    port6379_taken || { echo "memtier-suite: redis-server on 6379 did not start" >&2; exit 2; }
    echo "== 6379: the script's own redis-server (pid $port6379_pid), the same for both tools"
fi

# One tree per tool: the tests and their runner, and `memtier_benchmark` (the runner's
# MEMTIER_BINARY is always the tree's own).
tree() {
    local dir=$work/$1 binary=$2
    mkdir -p "$dir"
    cp -r "$checkout/tests" "$dir/tests"
    sed -i 's|RLTEST_ARGS=" --cluster-start-timeout|RLTEST_ARGS=" --randomize-ports --cluster-start-timeout|' \
        "$dir/tests/run_tests.sh"
    ln -s "$binary" "$dir/memtier_benchmark"
    echo "$dir"
}

run() {
    local name=$1 dir=$2 log=$work/$1.log
    echo "== $name"
    (cd "$dir" && TEST=${TEST:-} ./tests/run_tests.sh >"$log" 2>&1) || true
    # The summary lines without RLTest's colours.
    sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -a -E '^Total Tests Run' || echo "no summary: see $log"
    sed 's/\x1b\[[0-9;]*m//g' "$log" | awk '/^Failed Tests Summary/ {on=1; next} on && /^\t[a-z_]+:[a-z_]+/ {print}'
    cp "$log" "$here/../target/memtier-suite-$name.log" 2>/dev/null || true
}

for tool in ${TOOLS:-memtier respbench}; do
    case $tool in
        memtier) run memtier "$(tree memtier "$checkout/memtier_benchmark")" ;;
        respbench) run respbench "$(tree respbench "$respbench")" ;;
        *) echo "memtier-suite: TOOLS names memtier and respbench, not $tool" >&2; exit 2 ;;
    esac
done
