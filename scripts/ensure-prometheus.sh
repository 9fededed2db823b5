#!/usr/bin/env bash
# Installs Debian's prometheus (2.42 in Debian 12) when /usr/bin/prometheus is missing (as root,
# with apt-get), for the live metrics test (tests/integration/live_metrics.rs), which runs the
# binary with its own configuration, data directory and port (never the packaged service: the
# package's start is left to the init system, and the test starts nothing it did not create).
# Exports RESPBENCH_REQUIRE_PROMETHEUS=1 so that test fails instead of skipping when it is missing.
# Sourced by the test script. Without root or apt-get it says what to install and returns 1.
ensure_prometheus() {
  export RESPBENCH_REQUIRE_PROMETHEUS=1
  if [ -x /usr/bin/prometheus ]; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing prometheus (Debian package, for the live metrics test)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    return 0
  fi
  echo "prometheus is missing: install it (e.g. 'sudo apt-get install prometheus')" >&2
  return 1
}
