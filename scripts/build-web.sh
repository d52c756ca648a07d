#!/usr/bin/env bash
# Builds the static site into dist/ (or $DIST): the Leptos page (src/bin/app.rs) and the
# analysis worker (src/bin/worker.rs) for wasm32, wasm-bindgen --target web, wasm-opt when it
# works, then index.html + www/. Works offline. Uses a normal rustup toolchain when its wasm32
# target is installed, else Debian's rustc-web with -Zbuild-std (see DESIGN.md section 1),
# installing missing tools on a fresh Debian machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
WBG_VERSION=0.2.130
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/web}
TARGET=wasm32-unknown-unknown
say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Compile both binaries for wasm32.
sysroot=$(rustc --print sysroot 2>/dev/null || true)
if [ -n "$sysroot" ] && [ -d "$sysroot/lib/rustlib/$TARGET" ]; then
  say "cargo build (toolchain at $sysroot)"
  cargo build --release --target $TARGET --bin app --bin worker
else
  if [ ! -x /usr/bin/rustc ] || [ ! -d /usr/lib/rustlib/src/rust/library ] || ! command -v wasm-ld-22 >/dev/null; then
    say "installing Debian's rustc-web, cargo-web, rust-web-src, lld-22"
    as_root apt-get update -qq
    as_root apt-get install -y --no-install-recommends rustc-web cargo-web rust-web-src lld-22
  fi
  say "cargo build (Debian rustc-web, -Zbuild-std)"
  RUSTC=/usr/bin/rustc RUSTFLAGS="-C linker=wasm-ld-22" RUSTC_BOOTSTRAP=1 \
    /usr/bin/cargo build --release --target $TARGET -Zbuild-std=std,panic_abort --bin app --bin worker
fi

# 2. JS bindings. The CLI must match the crate's pinned wasm-bindgen version exactly.
WBG=$(command -v wasm-bindgen || echo "$HOME/.cargo/bin/wasm-bindgen")
if ! "$WBG" --version 2>/dev/null | grep -q " $WBG_VERSION"; then
  say "installing wasm-bindgen-cli $WBG_VERSION (a few minutes, once)"
  cargo install wasm-bindgen-cli --version $WBG_VERSION   # no --locked: a locked dep is gone from crates.io
  WBG=$HOME/.cargo/bin/wasm-bindgen
fi
rm -rf "$DIST"
mkdir -p "$DIST/pkg"
for bin in app worker; do
  "$WBG" --target web --no-typescript --out-dir "$DIST/pkg" "$CARGO_TARGET_DIR/$TARGET/release/$bin.wasm"
done

# 3. Shrink the wasm when a wasm-opt is available and understands the features rustc emits
#    (Debian's binaryen is old): keep the unoptimised file when it fails.
if command -v wasm-opt >/dev/null; then
  for wasm in "$DIST"/pkg/*_bg.wasm; do
    if wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
         --enable-mutable-globals --enable-reference-types --enable-multivalue \
         -o "$wasm.opt" "$wasm" 2>"$DIST/wasm-opt.log"; then
      mv "$wasm.opt" "$wasm"
    else
      say "wasm-opt failed on $(basename "$wasm"), keeping it unoptimised (see $DIST/wasm-opt.log)"
      rm -f "$wasm.opt"
    fi
  done
  rm -f "$DIST/wasm-opt.log"
else
  say "wasm-opt not found: skipping size optimisation (apt-get install binaryen)"
fi

# 4. The page and its static files.
cp index.html "$DIST/"
cp -r www/. "$DIST/"
touch "$DIST/.nojekyll"

say "sizes (raw / gzip -9)"
for f in "$DIST"/pkg/*.wasm "$DIST"/pkg/*.js "$DIST"/*.js "$DIST"/*.css "$DIST"/index.html; do
  printf '%8d %8d  %s\n' "$(wc -c <"$f")" "$(gzip -9c "$f" | wc -c)" "${f#"$DIST"/}"
done | tee "$DIST/.sizes" >&2
awk '{r+=$1; g+=$2} END {printf "%8d %8d  total\n", r, g}' "$DIST/.sizes" >&2
rm -f "$DIST/.sizes"
say "built $DIST"
