#!/usr/bin/env bash
# Packs a built CLI for a release: tracesight-<version>-<target>.tar.gz (the binary, README.md,
# LICENSE) and its .sha256 (`sha256sum -c` / `shasum -a 256 -c` read it), in OUT_DIR.
# The release workflow (.github/workflows/release.yml) packs the profile-guided build of each
# platform so; scripts/test-pgo.sh packs its build and checks the archive.
#
#   scripts/package.sh BIN [OUT_DIR]     (OUT_DIR defaults to target/package)
#
# Env: TARGET, the target triple in the name (default: rustc's host).
set -euo pipefail
die() { echo "package: $*" >&2; exit 1; }
bin=${1:-}
[ -n "$bin" ] && [ -f "$bin" ] && [ -x "$bin" ] || die "usage: scripts/package.sh BIN [OUT_DIR] (BIN: an executable, not '$bin')"
# Both paths as the caller gave them, from the caller's directory.
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
out=${2:-}
[ -z "$out" ] || { mkdir -p "$out" && out=$(cd "$out" && pwd); }
cd "$(dirname "$0")/.."
out=${out:-$PWD/target/package}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ -n "$version" ] || die "no version in Cargo.toml"
target=${TARGET:-$(rustc -vV | sed -n 's/^host: //p')}
[ -n "$target" ] || die "no target triple (set TARGET)"
# The binary must be the one built from this version: a stale binary would be released under it.
said=$("$bin" --version) || die "$bin --version failed"
[ "$said" = "tracesight $version" ] || die "$bin says '$said', Cargo.toml says version $version"

name="tracesight-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$bin" "$stage/$name/tracesight"
cp README.md LICENSE "$stage/$name/"
mkdir -p "$out"
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
if command -v sha256sum >/dev/null; then
  sum=$(cd "$out" && sha256sum "$name.tar.gz")
else
  sum=$(cd "$out" && shasum -a 256 "$name.tar.gz")
fi
echo "$sum" >"$out/$name.tar.gz.sha256"
echo "$out/$name.tar.gz"
