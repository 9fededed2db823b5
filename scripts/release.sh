#!/usr/bin/env bash
# Builds the release tarball for machines without Rust:
#   target/release/respbench-VERSION-ARCH.tar.gz
# holding one directory, respbench-VERSION-ARCH/, laid out like an installation prefix:
#   bin/respbench                                  the binary (stripped; needs only glibc)
#   share/man/man1/respbench.1                     `respbench man`
#   share/bash-completion/completions/respbench    `respbench completions bash`
#   share/zsh/site-functions/_respbench            `respbench completions zsh`
#   share/fish/vendor_completions.d/respbench.fish `respbench completions fish`
#   README.md, INSTALL.md (docs/install.md), LICENSE-MIT, LICENSE-APACHE
# so `tar -xzf … --strip-components=1 -C /usr/local` installs it (docs/install.md).
# The man page and completions come from the binary just built, so they match it.
# Usage: bash scripts/release.sh   (honours CARGO_TARGET_DIR; prints the tarball's path)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked --bin respbench
target="${CARGO_TARGET_DIR:-target}"
bin="$target/release/respbench"
version="$("$bin" --version | cut -d' ' -f2)"
arch="$(uname -m)"
name="respbench-$version-$arch"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
dir="$stage/$name"
mkdir -p "$dir/bin" "$dir/share/man/man1" "$dir/share/bash-completion/completions" \
  "$dir/share/zsh/site-functions" "$dir/share/fish/vendor_completions.d"

install -m 755 "$bin" "$dir/bin/respbench"
# The release profile keeps line tables for profiling (Cargo.toml); users do not need them.
if command -v strip >/dev/null 2>&1; then
  strip "$dir/bin/respbench"
fi
"$dir/bin/respbench" man >"$dir/share/man/man1/respbench.1"
"$dir/bin/respbench" completions bash >"$dir/share/bash-completion/completions/respbench"
"$dir/bin/respbench" completions zsh >"$dir/share/zsh/site-functions/_respbench"
"$dir/bin/respbench" completions fish >"$dir/share/fish/vendor_completions.d/respbench.fish"
install -m 644 README.md LICENSE-MIT LICENSE-APACHE "$dir/"
install -m 644 docs/install.md "$dir/INSTALL.md"

out="$target/release/$name.tar.gz"
# Same owner and order whoever builds it.
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner -czf "$out" "$name"
echo "$out"
