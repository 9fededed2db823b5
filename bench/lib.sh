# shellcheck shell=bash
# What every bench script shares, held once: the respbench binary, a throwaway server on a free
# loopback port (pinned to one CPU, respbench to another), its stop by PID, the client's CPU time
# from wait4's rusage, and a median. Source it after `set -euo pipefail`:
#
#   . "$(dirname "$0")/lib.sh"
#   bench_respbench                          # sets RESPBENCH (builds unless RESPBENCH is set)
#   bench_start_server "$(command -v redis-server)"    # sets PORT and SERVER_PID
#   bench_start_cluster "$(command -v redis-server)"   # three primaries joined; PORT is one
#   cpu="$(bench_cpu "$BENCH_TMP/out" "${PIN_CLIENT[@]}" "$RESPBENCH" -p "$PORT" -t get -q)"
#
# Why one file: the scripts measured the same way with copies of the same preamble, and a fix
# to one copy (a server that would not stop, a pin on a one-CPU machine) reached only that one.
# It runs nothing when sourced but `mktemp -d` and the exit trap; every server it starts listens
# on 127.0.0.1 (or a unix socket in BENCH_TMP) and is stopped by its PID on exit.

BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_NAME="$(basename "${BENCH_NAME:-$0}")"
BENCH_TMP="$(mktemp -d "${TMPDIR:-/tmp}/respbench-bench.XXXXXX")"
# 1 keeps BENCH_TMP (logs, raw results) after the script ends; it is kept on failure too.
BENCH_KEEP_TMP="${BENCH_KEEP_TMP:-0}"
BENCH_SERVER_PIDS=()
BENCH_SERVERS=0

bench_die() { echo "$BENCH_NAME: error: $*" >&2; exit 1; }
bench_warn() { echo "$BENCH_NAME: warning: $*" >&2; }
bench_info() { echo "$BENCH_NAME: $*" >&2; }

# Stops one server this script started: SIGTERM, then SIGKILL if it is still running after 5 s
# (an unreaped child stays visible to `kill -0` as a zombie, so its state is read instead).
bench_stop_server() {
  local pid="$1" state="" _
  # A server that already ended (a fuzzer's SHUTDOWN) is only reaped.
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do
      state="$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)" || state=""
      case "$state" in "" | Z) break ;; esac
      sleep 0.1
    done
    case "$state" in "" | Z) ;; *) kill -9 "$pid" 2>/dev/null || true ;; esac
  fi
  wait "$pid" 2>/dev/null || true
  local kept=() p
  for p in ${BENCH_SERVER_PIDS[@]+"${BENCH_SERVER_PIDS[@]}"}; do
    [ "$p" = "$pid" ] || kept+=("$p")
  done
  BENCH_SERVER_PIDS=(${kept[@]+"${kept[@]}"})
}

bench_cleanup() {
  local rc=$? pid
  for pid in ${BENCH_SERVER_PIDS[@]+"${BENCH_SERVER_PIDS[@]}"}; do bench_stop_server "$pid"; done
  if [ "$BENCH_KEEP_TMP" = 1 ] || [ "$rc" != 0 ]; then
    bench_info "temporary files kept in $BENCH_TMP"
  else
    rm -rf "$BENCH_TMP"
  fi
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The release respbench: RESPBENCH when set (no build), else `cargo build --release` (unless
# BENCH_BUILD=0) and the binary in the target directory `cargo metadata` names (CARGO_TARGET_DIR
# respected).
bench_respbench() {
  if [ -z "${RESPBENCH:-}" ]; then
    command -v cargo >/dev/null 2>&1 ||
      bench_die "cargo not found: install a Rust toolchain (https://rustup.rs) or set RESPBENCH=path"
    if [ "${BENCH_BUILD:-1}" = 1 ]; then
      bench_info "building respbench (cargo build --release)"
      (cd "$BENCH_ROOT" && cargo build --release --quiet --bin respbench) ||
        bench_die "cargo build --release failed"
    fi
    local target
    target="$(cd "$BENCH_ROOT" && cargo metadata --format-version 1 --no-deps |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
    RESPBENCH="$target/release/respbench"
  fi
  [ -x "$RESPBENCH" ] || bench_die "no respbench binary at $RESPBENCH (build it, or set RESPBENCH=path)"
}

# A TCP port free on 127.0.0.1 now.
bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The pins: the server on SERVER_CPU (0) and clients on CLIENT_CPU (1) when there are two CPUs and
# taskset; otherwise nothing is pinned (a warning says so) and PIN_SERVER / PIN_CLIENT are empty.
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
PIN_SERVER=()
PIN_CLIENT=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
  PIN_SERVER=(taskset -c "$SERVER_CPU")
  PIN_CLIENT=(taskset -c "$CLIENT_CPU")
  PINNING="server on CPU $SERVER_CPU, clients on CPU $CLIENT_CPU (taskset)"
else
  PINNING="none (nproc=$(nproc)): server and client share the CPUs"
  bench_warn "not pinned ($PINNING): absolute figures mean little, ratios only roughly"
fi

# bench_start_server BIN [ARGS...]: BIN on a free port of 127.0.0.1, pinned, with no persistence
# and a data directory of its own (ARGS come after, and may add a unix socket or TLS). Sets PORT,
# SERVER_PID and SERVER_LOG, and returns once it answers PING (10 s at most).
bench_start_server() {
  local bin="$1"
  shift
  [ -x "$bin" ] || bench_die "no server binary at '$bin' (set SERVER=path)"
  BENCH_SERVERS=$((BENCH_SERVERS + 1))
  local dir="$BENCH_TMP/server-$BENCH_SERVERS"
  mkdir -p "$dir"
  PORT="$(bench_free_port)"
  SERVER_LOG="$dir/server.log"
  # taskset execs the server: the PID is the server's.
  ${PIN_SERVER[@]+"${PIN_SERVER[@]}"} "$bin" --port "$PORT" --bind 127.0.0.1 --save '' \
    --appendonly no --daemonize no --dir "$dir" "$@" >"$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  BENCH_SERVER_PIDS+=("$SERVER_PID")
  python3 - "$PORT" <<'PY' || bench_die "$bin did not start on port $PORT; log:$(echo; tail -n 20 "$SERVER_LOG")"
import socket, sys, time
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5) as s:
            s.settimeout(1)
            s.sendall(b"PING\r\n")
            if s.recv(64).startswith(b"+PONG"):
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.05)
sys.exit(1)
PY
}

# bench_start_cluster BIN: three cluster-enabled primaries of BIN (bench_start_server each), joined
# with `redis-cli --cluster create` and waited for until `cluster_state:ok` (10 s at most). Sets
# PORT to the last node's. Needs redis-cli.
bench_start_cluster() {
  local bin="$1" nodes=()
  command -v redis-cli >/dev/null || bench_die "the cluster case needs redis-cli"
  for _ in 1 2 3; do
    bench_start_server "$bin" --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-port "$(bench_free_port)"
    nodes+=("127.0.0.1:$PORT")
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$BENCH_TMP/create.log" 2>&1 ||
    bench_die "redis-cli --cluster create failed: $(tail -5 "$BENCH_TMP/create.log")"
  for _ in $(seq 100); do
    redis-cli -p "$PORT" cluster info 2>/dev/null | grep -q cluster_state:ok && return 0
    sleep 0.1
  done
  bench_die "the cluster on ports ${nodes[*]} did not reach cluster_state:ok in 10 s"
}

# bench_cpu OUT CMD...: runs CMD (its stdout to the file OUT, /dev/null for none) and prints its
# CPU seconds, user + system of every thread, from the rusage wait4() returns: nothing sampled,
# start-up included. A command that fails ends the script.
bench_cpu() {
  local out="$1"
  shift
  python3 - "$out" "$@" <<'PY' || bench_die "failed: $*"
import os, subprocess, sys
with open(sys.argv[1], "wb") as out:
    p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
if status != 0:
    sys.exit(1)
print(f"{ru.ru_utime + ru.ru_stime:.6f}")
PY
}

# The median of the numbers on stdin, one a line (the upper one of an even count).
bench_median() {
  grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
