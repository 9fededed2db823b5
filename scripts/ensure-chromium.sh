#!/usr/bin/env bash
# Installs Debian's chromium when no Chromium is on PATH (as root, with apt-get), for the test
# that opens the HTML report in a real browser (tests/integration/html.rs), and exports
# RESPBENCH_REQUIRE_BROWSER=1 so that test fails instead of skipping when the browser is missing.
# Sourced by the test script. Without root or apt-get it says what to install and returns 1.
ensure_chromium() {
  export RESPBENCH_REQUIRE_BROWSER=1
  if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || command -v google-chrome >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing chromium (Debian package, for the HTML report's browser test)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    return 0
  fi
  echo "chromium is missing: install it (e.g. 'sudo apt-get install chromium'), or set CHROMIUM" \
    "to a Chromium binary" >&2
  return 1
}
