#!/usr/bin/env bash
# The NEON code (src/input/formats/chrome_json/blocks.rs, cfg(aarch64)) on 64-bit ARM: clippy for
# aarch64, then the event scanner's tests (the vector blocks against their scalar references,
# the scanner against serde on fixtures and real traces) built for aarch64 and run under
# qemu-user's emulation of it. Installs Debian's qemu-user and aarch64 gcc (the linker) and
# rustup's aarch64 standard library when missing; skips with a message when they cannot be had.
# Correctness only: emulated timings mean nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=aarch64-unknown-linux-gnu
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
  echo "installing Debian's qemu-user and gcc-aarch64-linux-gnu" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross >/dev/null || true
fi
sysroot=$(rustc --print sysroot)
if [ ! -d "$sysroot/lib/rustlib/$TARGET" ]; then
  timeout 300 rustup target add $TARGET >/dev/null 2>&1 || true
fi
if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null \
  || [ ! -d "$sysroot/lib/rustlib/$TARGET" ]; then
  echo "SKIPPED: the aarch64 (NEON) tests need qemu-user, gcc-aarch64-linux-gnu and rustup's $TARGET, which could not be installed" >&2
  exit 0
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/arm}
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
cargo clippy --target $TARGET --all-targets --profile test-opt -- -D warnings
cargo test --target $TARGET --profile test-opt --lib chrome_json 2>&1 | tee "$CARGO_TARGET_DIR/arm-tests.log"
# The tests must have run as aarch64 code, not been filtered away.
grep -q 'chrome_json::structural::tests::classify_equals_the_scalar_reference ... ok' "$CARGO_TARGET_DIR/arm-tests.log"
grep -E '^test result:' "$CARGO_TARGET_DIR/arm-tests.log" | sed 's/^/aarch64 (qemu): /'
