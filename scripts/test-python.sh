#!/usr/bin/env bash
# The Python package: `pip install .` (maturin builds the bindings in python/) into a fresh
# virtual environment, target/pyenv, then its pytest suite (tests/python) against the CLI
# built from the same tree (TRACESIGHT_BIN, else the release build). pandas, nbclient and
# ipykernel come from PyPI for the DataFrame and notebook tests; torch is not installed (its
# test skips, saying so). The official MCP SDK (`mcp`) drives `tracesight mcp` in test_mcp.py;
# where it cannot be installed that test skips.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${TRACESIGHT_BIN:-}
if [ -z "$BIN" ]; then
  cargo build --release --bin tracesight
  BIN="$ROOT/target/release/tracesight"
fi
BIN=$(realpath "$BIN")
rm -rf target/pyenv
python3 -m venv target/pyenv
PIP="target/pyenv/bin/pip --disable-pip-version-check -q"
$PIP install pytest pandas nbclient nbformat ipykernel
$PIP install .
started=$(date +%s)
# The SDK's 1.x API (camelCase fields, as the protocol spells them); 2.x renamed them.
if $PIP install 'mcp>=1.9,<2'; then
  echo "test-python: the mcp package installed in $(( $(date +%s) - started )) s"
else
  echo "test-python: the mcp package could not be installed; test_mcp.py will skip"
fi
# Run outside the source tree, so the installed package is the one imported.
cd target
TRACESIGHT_BIN="$BIN" pyenv/bin/python -m pytest -rs -p no:cacheprovider "$ROOT/tests/python"
