#!/usr/bin/env bash
# Lints the browser code (src/web and the wasm entry points, all cfg(wasm32)), which `cargo
# clippy` on the host never compiles: clippy for wasm32 with the toolchain build-web.sh uses (a
# rustup toolchain with the wasm32 target, else Debian's rustc-web and its clippy, installed
# when missing). Warnings fail.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=wasm32-unknown-unknown
# With the target features the page is built with (scripts/build-web.sh): the same code linted.
SIMD="-C target-feature=+simd128"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/web-clippy}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

sysroot=$(rustc --print sysroot 2>/dev/null || true)
if [ -n "$sysroot" ] && [ -d "$sysroot/lib/rustlib/$TARGET" ]; then
  RUSTFLAGS="$SIMD" cargo clippy --target $TARGET --bin app --bin worker -- -D warnings
else
  if [ ! -x /usr/bin/cargo-clippy ] || [ ! -x /usr/bin/rustc ] || [ ! -d /usr/lib/rustlib/src/rust/library ]; then
    echo "installing Debian's rustc-web, cargo-web, rust-web-src, rust-web-clippy" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      rustc-web cargo-web rust-web-src rust-web-clippy >/dev/null
  fi
  # /usr/bin first: Debian's cargo finds Debian's cargo-clippy, not a rustup proxy.
  PATH=/usr/bin:$PATH RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS="$SIMD" \
    /usr/bin/cargo clippy --target $TARGET -Zbuild-std=std,panic_abort --bin app --bin worker -- -D warnings
fi
