#!/usr/bin/env bash
# Builds the site and serves dist/ on localhost. PORT=8000 by default; SKIP_BUILD=1 to reuse dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${SKIP_BUILD:-}" = 1 ] || scripts/build-web.sh
PORT=${PORT:-8000}
echo "tracesight: http://127.0.0.1:$PORT/  (Ctrl-C stops)"
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory dist
