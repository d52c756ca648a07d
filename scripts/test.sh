#!/usr/bin/env bash
# Runs every test: the native core and CLI (cargo test), then the real WebAssembly build in
# headless Chromium and, its core cases, Firefox ESR (tests/browser). Installs what is missing on a fresh Debian machine
# (Chromium, Firefox ESR, the WebAssembly toolchain and its clippy, wasm-bindgen-cli, playwright-core from
# npm), and the Python package in a virtual environment (scripts/test-python.sh). It also checks that src/ has no import cycles (scripts/check_layers.py), tests the NEON code for aarch64 under qemu (scripts/test-arm.sh) and the profile-guided build (scripts/test-pgo.sh). NATIVE_ONLY=1 skips the browser code's lints and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

mkdir -p target
# Style and lints first: both are part of the test command.
for tool in rustfmt clippy; do
  command -v "cargo-${tool/rustfmt/fmt}" >/dev/null || timeout 120 rustup component add "$tool" >/dev/null 2>&1 || true
done
say "cargo fmt --check"
cargo fmt --check
say "cargo clippy --all-targets -D warnings"
cargo clippy --all-targets --profile test-opt -- -D warnings
cargo clippy -p tracesight-python --profile test-opt -- -D warnings
say "layers: no import cycles in src/, file sizes (scripts/check_layers.py)"
python3 scripts/check_layers.py --self-test
python3 scripts/check_layers.py
say "native tests: cargo test --profile test-opt"
cargo test --profile test-opt 2>&1 | tee target/native-tests.log
grep -E '^test result:' target/native-tests.log | awk '{p+=$4; f+=$6} END {printf "native: %d passed, %d failed\n", p, f}'
# The CLI that cargo test built (test-opt) serves the Python, Slurm and browser tests: a fat-LTO
# release build only for them took about 2.5 of CI's minutes on two cores. scripts/test-pgo.sh
# checks that another build of the same code gives the same output byte for byte.
export TRACESIGHT_BIN="$PWD/target/test-opt/tracesight"

say "aarch64: the NEON scanner blocks, linted and tested under qemu (scripts/test-arm.sh)"
scripts/test-arm.sh

say "profile-guided build: scripts/build-pgo.sh on a small training set, same output (scripts/test-pgo.sh)"
scripts/test-pgo.sh

say "Python package: pip install . in a fresh venv, pytest (scripts/test-python.sh)"
scripts/test-python.sh

say "Slurm: the README's recipe on a real single-node Slurm (scripts/test-slurm.sh)"
scripts/test-slurm.sh

[ "${NATIVE_ONLY:-}" = 1 ] && exit 0

say "cargo clippy on the browser code (wasm32) -D warnings"
scripts/clippy-web.sh

# The browsers, from Debian's packages: Chromium for every case, Firefox ESR for the core ones
# (tests/browser/run.sh skips Firefox with a message if it still cannot be had).
apt_install() {
  say "installing Debian's $1"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$1" >/dev/null
}
command -v chromium >/dev/null || apt_install chromium
if [ "${NO_FIREFOX:-}" != 1 ] && [ ! -x "${FIREFOX:-/usr/bin/firefox-esr}" ]; then
  apt_install firefox-esr || echo "could not install firefox-esr: its cases will be skipped" >&2
fi
say "browser tests: real wasm build in headless Chromium, and Firefox ESR (core cases)"
tests/browser/run.sh
