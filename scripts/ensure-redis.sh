#!/usr/bin/env bash
# Installs Debian's redis-server and redis-tools when they are missing (as root, with apt-get);
# otherwise says what to install. Also the build's system dependencies (ensure_build_deps).
# Sourced by the quick-start and test scripts.
ensure_redis() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing redis-server and redis-tools (Debian packages)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
    # The package may start a system instance on 6379; we never use it, and stop only what we start.
    return 0
  fi
  echo "redis-server is missing: install it (e.g. 'sudo apt-get install redis-server redis-tools')" >&2
  return 1
}

# Installs what building respbench needs besides a Rust toolchain: OpenSSL's headers and
# pkg-config (the `openssl` crate links the system's libssl), when missing (as root, with apt-get);
# otherwise says what to install.
ensure_build_deps() {
  if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists openssl 2>/dev/null; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing libssl-dev and pkg-config (Debian packages)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev pkg-config >/dev/null
    return 0
  fi
  echo "OpenSSL development files are missing: install them (e.g. 'sudo apt-get install libssl-dev pkg-config')" >&2
  return 1
}

# Prints a free loopback TCP port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
