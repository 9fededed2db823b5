#!/usr/bin/env bash
# Installs Debian's redis-server, redis-tools and redis-sentinel when they are missing (as root,
# with apt-get), and openssl (the tests make certificates with it the way valkey's test suite
# does); otherwise says what to install. Sourced by the quick-start and test scripts.
# redis-sentinel: the --sentinel tests start three Sentinels of their own.
ensure_redis() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 \
    && command -v redis-sentinel >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing redis-server, redis-tools, redis-sentinel and openssl (Debian packages)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools redis-sentinel \
      openssl >/dev/null
    # The packages may start system instances on 6379/26379; we never use them, and stop only
    # what we start.
    return 0
  fi
  echo "redis-server or redis-sentinel is missing: install them (e.g. 'sudo apt-get install redis-server redis-tools redis-sentinel')" >&2
  return 1
}

# Prints a free loopback TCP port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
