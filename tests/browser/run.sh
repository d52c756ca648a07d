#!/usr/bin/env bash
# Browser end-to-end tests: builds the site (scripts/build-web.sh) and the CLI, installs
# playwright-core (no bundled browser: uses /usr/bin/chromium), serves dist/ on a free
# loopback port from inside the test, and runs the tests with node --test.
# SKIP_BUILD=1 reuses dist/ and target/release/tracesight.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
if [ "${SKIP_BUILD:-}" != 1 ]; then
  "$ROOT/scripts/build-web.sh"
  [ -n "${TRACESIGHT_BIN:-}" ] || (cd "$ROOT" && cargo build --release --bin tracesight)
fi
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "no browser at $CHROMIUM: apt-get install chromium, or set CHROMIUM" >&2; exit 1; }
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
[ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund
exec node --test --test-concurrency=1 --test-timeout=600000 e2e.test.mjs
