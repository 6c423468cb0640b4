#!/usr/bin/env bash
# Prints the path of the third-party ACP client `acpx` (its package folder) that the ACP tests
# drive, installing it when missing from the npm registry into .cache/acpx of this checkout.
# It is not a devDependency: one of its dependencies lists platform packages the registry does
# not serve for every platform, which a lock file cannot hold (npm ci would refuse the lock).
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.19.1
dir=.cache/acpx
pkg="$PWD/$dir/node_modules/acpx"
if [ ! -f "$pkg/package.json" ] || ! grep -q "\"version\": \"$version\"" "$pkg/package.json"; then
  echo "acpx: installing acpx@$version into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "acpx@$version" >&2
fi
echo "$pkg"
