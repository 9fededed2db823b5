#!/usr/bin/env bash
# Side-by-side comparison of respbench and redis-benchmark against one throwaway redis-server.
# See bench/README.md for what is measured and how to read it; `bash bench/compare.sh --help`.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: bash bench/compare.sh [OPTIONS]

Runs respbench and redis-benchmark against the same redis-server (server pinned to one core,
clients to another), interleaved, for SET and GET at -P 1 and -P 16 over TCP, a unix socket and
TLS (both tools with --tls --cacert, certificates made for the run), and prints a Markdown report:
throughput, client CPU per request, server busy %, ratios between the tools, the cost of TLS over
plain TCP for each tool, and syscalls / instructions per request at SET -P 1 (TCP and TLS).

Options (environment variable in brackets):
  -n, --requests N     requests per run                          [N, default 1000000]
  -r, --reps R         interleaved repetitions per case          [REPS, default 3]
      --quick          N=100000 REPS=1 (unless -n/-r given after it)
  -c, --clients C      connections per run                       [CLIENTS, default 50]
      --keyspace K     -r value given to both tools              [KEYSPACE, default 100000]
      --cost-requests M  -n of the strace/perf run               [COST_N, default 100000]
      --callgrind-requests M  -n of the shorter callgrind run (a second run uses 2*M)
                                                                 [CALLGRIND_N, default 20000]
      --transports LIST  comma-separated, of tcp, unix, tls      [TRANSPORTS, default tcp,unix,tls]
      --no-tls         same as --transports tcp,unix
      --out FILE       also write the Markdown report to FILE
      --respbench PATH use this respbench binary; do not build
      --no-build       use the already built binary in the target dir
      --no-costs       skip the strace / perf / callgrind measurements
      --callgrind      run callgrind even when perf counts instructions
      --keep-tmp       keep the temporary directory (logs, raw results)
  -h, --help           this help

Server on CPU 0 and clients on CPU 1 (SERVER_CPU / CLIENT_CPU to change); with a single CPU
nothing is pinned and a warning is printed. Each client run is bounded by `timeout`
(RUN_TIMEOUT seconds, default 60 + N/1000). Needs redis-server, redis-benchmark, taskset,
python3 and cargo, and for TLS openssl (certificates) and a redis-server/redis-benchmark built
with TLS (Debian's are); as root, missing Debian packages are installed with apt-get.
EOF
}

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
die() { bench_die "$@"; }
warn() { bench_warn "$@"; }
info() { bench_info "$@"; }

# ------------------------------------------------------------------------------------------------
# Options

N="${N:-1000000}"
REPS="${REPS:-3}"
CLIENTS="${CLIENTS:-50}"
KEYSPACE="${KEYSPACE:-100000}"
COST_N="${COST_N:-100000}"
CALLGRIND_N="${CALLGRIND_N:-20000}"
TRANSPORTS="${TRANSPORTS:-tcp,unix,tls}"
OUT=""
RESPBENCH="${RESPBENCH:-}"
BUILD=1
COSTS=1
FORCE_CALLGRIND=0

need_arg() { [ "$#" -ge 2 ] && [ -n "$2" ] || die "option $1 needs a value (see --help)"; }
while [ "$#" -gt 0 ]; do
  case "$1" in
    -n|--requests) need_arg "$@"; N="$2"; shift 2 ;;
    -r|--reps) need_arg "$@"; REPS="$2"; shift 2 ;;
    --quick) N=100000; REPS=1; shift ;;
    -c|--clients) need_arg "$@"; CLIENTS="$2"; shift 2 ;;
    --keyspace) need_arg "$@"; KEYSPACE="$2"; shift 2 ;;
    --cost-requests) need_arg "$@"; COST_N="$2"; shift 2 ;;
    --callgrind-requests) need_arg "$@"; CALLGRIND_N="$2"; shift 2 ;;
    --transports) need_arg "$@"; TRANSPORTS="$2"; shift 2 ;;
    --no-tls) TRANSPORTS=tcp,unix; shift ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    --respbench) need_arg "$@"; RESPBENCH="$2"; BUILD=0; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --no-costs) COSTS=0; shift ;;
    --callgrind) FORCE_CALLGRIND=1; shift ;;
    --keep-tmp) BENCH_BENCH_KEEP_TMP=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in N REPS CLIENTS KEYSPACE COST_N CALLGRIND_N; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, got '${!v}'"
done
IFS=, read -r -a TRANSPORT_LIST <<<"$TRANSPORTS"
[ "${#TRANSPORT_LIST[@]}" -gt 0 ] || die "--transports is empty"
for tr in "${TRANSPORT_LIST[@]}"; do
  case "$tr" in tcp|unix|tls) ;; *) die "unknown transport '$tr' (tcp, unix, tls)" ;; esac
done
has_transport() { [[ ",$TRANSPORTS," == *",$1,"* ]]; }
RUN_TIMEOUT="${RUN_TIMEOUT:-$((60 + N / 1000))}"
[[ "$RUN_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "RUN_TIMEOUT must be a positive integer"

ROOT="$BENCH_ROOT"
HELPER="$ROOT/bench/compare.py"
[ -f "$HELPER" ] || die "missing $HELPER"

# ------------------------------------------------------------------------------------------------
# Dependencies: required ones fail the run, optional ones only disable a measurement.

is_root() { [ "$(id -u)" = 0 ]; }
apt_updated=0
apt_install() { # pkg... ; returns non-zero on failure
  is_root && command -v apt-get >/dev/null 2>&1 || return 1
  if [ "$apt_updated" = 0 ]; then
    apt-get update -qq >/dev/null 2>&1 || return 1
    apt_updated=1
  fi
  info "installing Debian packages: $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}

missing=()
required=(redis-server:redis-server redis-benchmark:redis-tools redis-cli:redis-tools
          taskset:util-linux timeout:coreutils python3:python3)
if has_transport tls; then required+=(openssl:openssl); fi
for pair in "${required[@]}"; do
  cmd="${pair%%:*}" pkg="${pair#*:}"
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if ! apt_install "${missing[@]}"; then
    die "missing required packages: ${missing[*]} (install with: sudo apt-get install ${missing[*]})"
  fi
  # The redis-server package may start a system instance on 6379; we never use or stop it.
fi

optional_tool() { # cmd pkg -> 0 if available (installing it as root)
  command -v "$1" >/dev/null 2>&1 && return 0
  if apt_install "$2" && command -v "$1" >/dev/null 2>&1; then return 0; fi
  warn "$1 not available (install: sudo apt-get install $2); skipping what needs it"
  return 1
}

# ------------------------------------------------------------------------------------------------
# Build respbench (same way as the rest of the project; CARGO_TARGET_DIR respected).

BENCH_BUILD="$BUILD" bench_respbench
REDIS_BENCHMARK="$(command -v redis-benchmark)"
if has_transport tls && ! "$REDIS_BENCHMARK" --help 2>&1 | grep -q -- '--tls '; then
  die "this redis-benchmark is built without TLS: use --no-tls"
fi

# ------------------------------------------------------------------------------------------------
# Server (PIN_SERVER, PIN_CLIENT and PINNING come from bench/lib.sh: the server on SERVER_CPU, the
# clients on CLIENT_CPU)

NPROC="$(nproc)"
TMP="$BENCH_TMP"
SOCK="$TMP/redis.sock"
TLS_ARGS=()
if has_transport tls; then
  # A CA and a server certificate for 127.0.0.1 (EC P-256), made for this run: both tools verify
  # the server with --cacert (respbench also checks that the certificate names 127.0.0.1).
  CERTS="$TMP/tls"
  mkdir -p "$CERTS"
  {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj "/CN=compare.sh CA" -keyout "$CERTS/ca.key" -out "$CERTS/ca.crt" &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
      -keyout "$CERTS/server.key" -out "$CERTS/server.csr" &&
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$CERTS/server.ext" &&
    openssl x509 -req -in "$CERTS/server.csr" -CA "$CERTS/ca.crt" -CAkey "$CERTS/ca.key" \
      -CAcreateserial -days 2 -extfile "$CERTS/server.ext" -out "$CERTS/server.crt"
  } >"$CERTS/openssl.log" 2>&1 || die "cannot make certificates with openssl; log:$(echo; cat "$CERTS/openssl.log")"
  TLS_PORT="$(bench_free_port)"
  TLS_ARGS=(--tls-port "$TLS_PORT" --tls-cert-file "$CERTS/server.crt"
            --tls-key-file "$CERTS/server.key" --tls-ca-cert-file "$CERTS/ca.crt"
            --tls-auth-clients no)
fi
bench_start_server "$(command -v redis-server)" --unixsocket "$SOCK" --unixsocketperm 700 \
  ${TLS_ARGS[@]+"${TLS_ARGS[@]}"}
info "redis-server PID $SERVER_PID on 127.0.0.1:$PORT and $SOCK${TLS_PORT:+, TLS on 127.0.0.1:$TLS_PORT}"
python3 "$HELPER" prefill "$SOCK" "$KEYSPACE" 3

# ------------------------------------------------------------------------------------------------
# Interleaved runs

RESULTS="$TMP/results.jsonl"
: >"$RESULTS"
tool_bin() { if [ "$1" = respbench ]; then echo "$RESPBENCH"; else echo "$REDIS_BENCHMARK"; fi; }
# client_cmd TOOL TRANSPORT TEST PIPELINE REQUESTS -> sets the array CMD
client_cmd() {
  CMD=("$(tool_bin "$1")")
  case "$2" in
    unix) CMD+=(-s "$SOCK") ;;
    tls) CMD+=(-h 127.0.0.1 -p "$TLS_PORT" --tls --cacert "$CERTS/ca.crt") ;;
    *) CMD+=(-h 127.0.0.1 -p "$PORT") ;;
  esac
  CMD+=(-c "$CLIENTS" -n "$5" -r "$KEYSPACE" -P "$4" -q -t "$3")
}

CASES=()
for test in set get; do for pipe in 1 16; do for tr in "${TRANSPORT_LIST[@]}"; do
  CASES+=("$test:$pipe:$tr")
done; done; done

runs=$((REPS * ${#CASES[@]} * 2))
info "$runs runs: -c $CLIENTS -n $N -r $KEYSPACE, $REPS rep(s), timeout ${RUN_TIMEOUT}s each"
for rep in $(seq "$REPS"); do
  for i in "${!CASES[@]}"; do
    IFS=: read -r test pipe tr <<<"${CASES[$i]}"
    # Alternate which tool goes first: per rep, and per case within a rep.
    if [ $(((rep + i) % 2)) = 1 ]; then order=(redis-benchmark respbench)
    else order=(respbench redis-benchmark); fi
    for tool in "${order[@]}"; do
      client_cmd "$tool" "$tr" "$test" "$pipe" "$N"
      python3 "$HELPER" run --results "$RESULTS" --tool "$tool" --test "$test" \
        --pipeline "$pipe" --transport "$tr" --rep "$rep" --requests "$N" \
        --server-pid "$SERVER_PID" --log "$TMP/run-$rep-$test-$pipe-$tr-$tool.log" -- \
        timeout -k 5 "$RUN_TIMEOUT" "${PIN_CLIENT[@]}" "${CMD[@]}"
    done
  done
done

# ------------------------------------------------------------------------------------------------
# Per-request costs at SET -P 1 over TCP (and TLS): syscalls (strace), instructions (perf, else
# callgrind). Rows are labelled "<tool>" for TCP and "<tool> TLS" for TLS.
COST_TRANSPORTS=(tcp)
if has_transport tls; then COST_TRANSPORTS+=(tls); fi
label() { if [ "$2" = tls ]; then echo "$1 TLS"; else echo "$1"; fi; }

REPORT_ARGS=()
NOTES=()
COST_TIMEOUT=$((120 + COST_N / 200 + CALLGRIND_N / 50))
if [ "$COSTS" = 1 ]; then
  if optional_tool strace strace; then
    for tr in "${COST_TRANSPORTS[@]}"; do for tool in redis-benchmark respbench; do
      info "strace -f -c: $tool SET -P 1 $tr -n $COST_N"
      client_cmd "$tool" "$tr" set 1 "$COST_N"
      f="$TMP/strace-$tool-$tr"
      if timeout -k 5 "$COST_TIMEOUT" "${PIN_CLIENT[@]}" strace -f -c -o "$f.txt" \
          "${CMD[@]}" >"$f.log" 2>&1; then
        python3 "$HELPER" strace-summary "$f.txt" "$COST_N" >"$f.json"
        REPORT_ARGS+=(--syscalls "$(label "$tool" "$tr")=$f.json")
      else
        warn "strace run of $tool over $tr failed (see $f.log)"; BENCH_KEEP_TMP=1
        NOTES+=("strace run of $tool over $tr failed")
      fi
    done; done
  else
    NOTES+=("strace not available: no syscall counts")
  fi

  perf_ok=0
  if optional_tool perf linux-perf; then
    if perf stat -e instructions -x, -o "$TMP/perf-probe.txt" true >/dev/null 2>&1 \
        && [ "$(python3 "$HELPER" perf-summary "$TMP/perf-probe.txt")" != "{}" ]; then
      perf_ok=1
    fi
  fi
  if [ "$perf_ok" = 1 ]; then
    for tr in "${COST_TRANSPORTS[@]}"; do for tool in redis-benchmark respbench; do
      info "perf stat -e instructions: $tool SET -P 1 $tr -n $COST_N"
      client_cmd "$tool" "$tr" set 1 "$COST_N"
      f="$TMP/perf-$tool-$tr"
      if timeout -k 5 "$COST_TIMEOUT" perf stat -e instructions -x, -o "$f.txt" -- \
          "${PIN_CLIENT[@]}" "${CMD[@]}" >"$f.log" 2>&1; then
        python3 "$HELPER" perf-summary "$f.txt" >"$f.json"
        REPORT_ARGS+=(--perf "$(label "$tool" "$tr")=$f.json")
      else
        warn "perf run of $tool over $tr failed (see $f.log)"; BENCH_KEEP_TMP=1
      fi
    done; done
  else
    NOTES+=("perf instructions not supported here (\`perf stat -e instructions true\` counts nothing)")
  fi

  if [ "$perf_ok" = 0 ] || [ "$FORCE_CALLGRIND" = 1 ]; then
    if optional_tool valgrind valgrind; then
      for tr in "${COST_TRANSPORTS[@]}"; do for tool in redis-benchmark respbench; do
        points=()
        for n in "$CALLGRIND_N" $((CALLGRIND_N * 2)); do
          info "callgrind: $tool SET -P 1 $tr -n $n"
          out="$TMP/callgrind-$tool-$tr-$n.out"
          client_cmd "$tool" "$tr" set 1 "$n"
          if timeout -k 5 "$COST_TIMEOUT" "${PIN_CLIENT[@]}" valgrind --tool=callgrind \
              --callgrind-out-file="$out" "${CMD[@]}" \
              >"$TMP/callgrind-$tool-$tr-$n.log" 2>&1; then
            points+=("$n:$(python3 "$HELPER" callgrind-summary "$out")")
          else
            warn "callgrind run of $tool over $tr failed (see $TMP/callgrind-$tool-$tr-$n.log)"
            BENCH_KEEP_TMP=1
          fi
        done
        if [ "${#points[@]}" -gt 0 ]; then
          REPORT_ARGS+=(--callgrind "$(label "$tool" "$tr")=$(IFS=,; echo "${points[*]}")")
        fi
      done; done
    else
      NOTES+=("valgrind not available: no instruction counts")
    fi
  fi
fi

# ------------------------------------------------------------------------------------------------
# Report

cpu_model="$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)"
[ -n "$cpu_model" ] || cpu_model="$(uname -m)"
REPORT_ARGS+=(
  --meta "date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  --meta "kernel=$(uname -r)"
  --meta "cpu=$cpu_model"
  --meta "nproc=$NPROC"
  --meta "pinning=$PINNING"
  --meta "server_version=$(redis-server --version | head -n 1)"
  --meta "redis_benchmark_version=$("$REDIS_BENCHMARK" --version 2>&1 | head -n 1)"
  --meta "respbench_version=$("$RESPBENCH" --version 2>&1 | head -n 1)"
  --meta "workload=-c $CLIENTS -n $N -r $KEYSPACE -q -t set|get -P 1|16 over $TRANSPORTS (tcp: -h 127.0.0.1 -p; unix: -s; tls: -p <tls port> --tls --cacert ca.crt, EC P-256 certificate)"
  --meta "reps=$REPS"
  --meta "cost_case=SET -P 1 $(if has_transport tls; then echo "TCP and TLS"; else echo TCP; fi)"
  --meta "cost_requests=$COST_N"
)
for note in ${NOTES[@]+"${NOTES[@]}"}; do REPORT_ARGS+=(--note "$note"); done

python3 "$HELPER" report --results "$RESULTS" "${REPORT_ARGS[@]}" >"$TMP/report.md"
cat "$TMP/report.md"
if [ -n "$OUT" ]; then
  cp "$TMP/report.md" "$OUT" || die "cannot write $OUT"
  info "report written to $OUT"
fi
