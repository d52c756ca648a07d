#!/usr/bin/env bash
# Browser end-to-end tests: builds the site (scripts/build-web.sh) and the CLI, installs
# playwright-core and puppeteer-core (no bundled browser: they drive /usr/bin/chromium and
# Debian's firefox-esr), serves dist/ on a free loopback port from inside the tests, and runs
# them with node --test: every case in Chromium (e2e.test.mjs), the core cases in Firefox
# (firefox.test.mjs; installed with apt-get when missing, skipped with a message when it cannot
# be). Ends with a summary line per browser. SKIP_BUILD=1 reuses dist/ and
# target/release/tracesight; NO_FIREFOX=1 skips Firefox; ONLY=chromium or ONLY=firefox runs one
# file. Every console message of the Firefox cases (its workers' included) is kept in
# target/browser-firefox-console.log.
set -uo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if [ "${SKIP_BUILD:-}" != 1 ]; then
  "$ROOT/scripts/build-web.sh" || exit 1
  [ -n "${TRACESIGHT_BIN:-}" ] || (cd "$ROOT" && cargo build --release --bin tracesight) || exit 1
fi
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "no browser at $CHROMIUM: apt-get install chromium, or set CHROMIUM" >&2; exit 1; }
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1
{ [ -d node_modules/playwright-core ] && [ -d node_modules/puppeteer-core ]; } || npm ci --no-audit --no-fund || exit 1
mkdir -p "$ROOT/target"

# Runs one test file, its output also in target/browser-NAME.log; prints "NAME: N passed, M
# failed, S skipped (T s)" into $SUMMARY and returns the runner's status.
SUMMARY=""
run_tests() {
  local name=$1 file=$2 log="$ROOT/target/browser-$1.log" t0=$SECONDS rc
  node --test --test-concurrency=1 --test-timeout=600000 "$file" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  SUMMARY+=$(awk -v n="$name" -v s=$((SECONDS - t0)) '/^# (pass|fail|skipped) /{v[$2]=$3}
    END {printf "%s: %d passed, %d failed, %d skipped (%d s)\n", n, v["pass"], v["fail"], v["skipped"], s}' "$log")$'\n'
  return "$rc"
}

chromium_rc=0
if [ "${ONLY:-chromium}" = chromium ]; then run_tests chromium e2e.test.mjs; chromium_rc=$?; fi

firefox_rc=0
export FIREFOX=${FIREFOX:-/usr/bin/firefox-esr}
if [ "${NO_FIREFOX:-}" = 1 ] || [ "${ONLY:-firefox}" != firefox ]; then
  SUMMARY+="firefox: SKIPPED (NO_FIREFOX=1 or ONLY=${ONLY:-})"$'\n'
else
  if [ ! -x "$FIREFOX" ]; then
    echo "== installing Debian's firefox-esr"
    { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends firefox-esr >/dev/null; } ||
      echo "could not install firefox-esr" >&2
  fi
  if [ -x "$FIREFOX" ]; then
    run_tests firefox firefox.test.mjs; firefox_rc=$?
  else
    SUMMARY+="firefox: SKIPPED: no browser at $FIREFOX and apt-get could not install firefox-esr (set FIREFOX to one)"$'\n'
  fi
fi
printf '\n%s' "$SUMMARY"
[ "$chromium_rc" = 0 ] && [ "$firefox_rc" = 0 ]
