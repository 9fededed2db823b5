#!/usr/bin/env bash
# Installs Debian's redis-server and redis-tools when they are missing (as root, with apt-get),
# and openssl (the tests make certificates with it the way valkey's test suite does); otherwise
# says what to install. Sourced by the quick-start and test scripts.
ensure_redis() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 \
    && command -v openssl >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing redis-server, redis-tools and openssl (Debian packages)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools openssl >/dev/null
    # The package may start a system instance on 6379; we never use it, and stop only what we start.
    return 0
  fi
  echo "redis-server is missing: install it (e.g. 'sudo apt-get install redis-server redis-tools')" >&2
  return 1
}

# Prints a free loopback TCP port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
