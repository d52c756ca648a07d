#!/usr/bin/env bash
# Builds the static site into dist/ (or $DIST): the Leptos page (src/bin/app.rs) and the
# analysis worker (src/bin/worker.rs) for wasm32, wasm-bindgen --target web, wasm-opt on the
# page's wasm when it works, then index.html + www/. Works offline. Uses a normal rustup toolchain when its wasm32
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

# Hosts the page may fetch ?trace= URLs from, besides its own origin: space-separated
# origins (scheme://host[:port]), written into the CSP's connect-src and compiled into the
# app (which names a host outside the list instead of failing on a CSP violation).
TRACESIGHT_TRACE_ORIGINS=${TRACESIGHT_TRACE_ORIGINS:-}
for o in $TRACESIGHT_TRACE_ORIGINS; do
  [[ $o =~ ^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$ ]] || { echo "TRACESIGHT_TRACE_ORIGINS: '$o' is not an origin like https://traces.example.com" >&2; exit 2; }
done
TRACESIGHT_TRACE_ORIGINS=$(echo $TRACESIGHT_TRACE_ORIGINS)   # one space between origins
export TRACESIGHT_TRACE_ORIGINS
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Compile both binaries for wasm32 with simd128 (every browser that runs the page has it):
#    LLVM vectorises loops with it and memchr searches 16 bytes at a time. It once made Firefox
#    slower; in Firefox ESR 153.8 and Chromium 156 the analysis worker takes about 5% less CPU
#    with it in both (docs/performance.md).
SIMD="-C target-feature=+simd128"
sysroot=$(rustc --print sysroot 2>/dev/null || true)
if [ -n "$sysroot" ] && [ -d "$sysroot/lib/rustlib/$TARGET" ]; then
  say "cargo build (toolchain at $sysroot)"
  RUSTFLAGS="$SIMD" cargo build --release --target $TARGET --bin app --bin worker
else
  if [ ! -x /usr/bin/rustc ] || [ ! -d /usr/lib/rustlib/src/rust/library ] || ! command -v wasm-ld-22 >/dev/null; then
    say "installing Debian's rustc-web, cargo-web, rust-web-src, lld-22"
    as_root apt-get update -qq
    as_root apt-get install -y --no-install-recommends rustc-web cargo-web rust-web-src lld-22
  fi
  say "cargo build (Debian rustc-web, -Zbuild-std)"
  RUSTC=/usr/bin/rustc RUSTFLAGS="-C linker=wasm-ld-22 $SIMD" RUSTC_BOOTSTRAP=1 \
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

# 3. Shrink the page's wasm with a current binaryen. Debian's wasm-opt (108) breaks wasm-bindgen's
#    externref table, so an older one is not used; npm's `binaryen` package is fetched into
#    target/web when npm is there. WASM_OPT=0 skips this step (faster dev builds).
BINARYEN_VERSION=132.0.0
WASM_OPT=${WASM_OPT:-}
wasm_opt_ok() { local v; v=$("$1" --version 2>/dev/null | grep -o '[0-9]\+' | head -1); [ -n "$v" ] && [ "$v" -ge 116 ]; }
if [ "$WASM_OPT" != 0 ]; then
  if [ -z "$WASM_OPT" ]; then
    npm_opt="$CARGO_TARGET_DIR/binaryen/node_modules/.bin/wasm-opt"
    if command -v wasm-opt >/dev/null && wasm_opt_ok wasm-opt; then
      WASM_OPT=wasm-opt
    elif [ -x "$npm_opt" ] || { command -v npm >/dev/null && say "installing binaryen $BINARYEN_VERSION from npm (once)" &&
        npm install --silent --no-audit --no-fund --prefix "$CARGO_TARGET_DIR/binaryen" "binaryen@$BINARYEN_VERSION" >&2; }; then
      WASM_OPT=$npm_opt
    fi
  fi
  if [ -n "$WASM_OPT" ] && wasm_opt_ok "$WASM_OPT"; then
    # The page is optimised for size. The worker is left as rustc built it: measured side by
    # side on the 500 MB bench trace, after wasm-opt -O3 it read no faster, and the page then
    # took about 100 ms longer to draw the report (170-210 ms against 265-410 ms from the
    # worker's last message), for 4% less gzipped size. Only features every current browser
    # runs (--all-features would emit imports Chromium rejects).
    wasm="$DIST/pkg/app_bg.wasm"
    "$WASM_OPT" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd -o "$wasm.opt" "$wasm" \
      && mv "$wasm.opt" "$wasm" || { say "wasm-opt failed on the page: kept unoptimised"; rm -f "$wasm.opt"; }
  else
    say "no wasm-opt >= 116 (Debian's 108 breaks reference types): wasm left unoptimised"
  fi
fi

# 4. The page and its static files.
sed "s#connect-src 'self'#connect-src 'self'${TRACESIGHT_TRACE_ORIGINS:+ $TRACESIGHT_TRACE_ORIGINS}#" index.html >"$DIST/index.html"
grep -q "connect-src 'self'${TRACESIGHT_TRACE_ORIGINS:+ $TRACESIGHT_TRACE_ORIGINS};" "$DIST/index.html" || { echo "index.html: CSP connect-src not found" >&2; exit 1; }
[ -z "$TRACESIGHT_TRACE_ORIGINS" ] || say "traces may be fetched from this site and: $TRACESIGHT_TRACE_ORIGINS"
cp -r www/. "$DIST/"
touch "$DIST/.nojekyll"

say "sizes (raw / gzip -9)"
for f in "$DIST"/pkg/*.wasm "$DIST"/pkg/*.js "$DIST"/*.js "$DIST"/*.css "$DIST"/index.html; do
  printf '%8d %8d  %s\n' "$(wc -c <"$f")" "$(gzip -9c "$f" | wc -c)" "${f#"$DIST"/}"
done | tee "$DIST/.sizes" >&2
awk '{r+=$1; g+=$2} END {printf "%8d %8d  total\n", r, g}' "$DIST/.sizes" >&2
rm -f "$DIST/.sizes"
say "built $DIST"
