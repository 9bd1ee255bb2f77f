#!/usr/bin/env bash
# The main job: the runtime's example Widget operator (packages/runtime/
# examples/widget-operator.ts) run as three sharded replicas against a real
# kube-apiserver and etcd from @tessera/testenv, scaled while Widgets change.
# Installs what it needs like scripts/test.sh (Node 24, npm packages, the
# control-plane binaries), builds, then runs scripts/demo.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TESSERA_NODE_OK:-}" ]; then TESSERA_NODE_OK=1 exec bash scripts/with-node.sh bash "$0" "$@"; fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
if [ -z "${TESSERA_CONTROLPLANE_DIR:-}${KUBEBUILDER_ASSETS:-}" ]; then
  TESSERA_CONTROLPLANE_DIR=$(bash packages/testenv/tools/controlplane/build.sh | tail -n 1)
  export TESSERA_CONTROLPLANE_DIR
fi
npm run --silent build
npm run --silent build:examples
node scripts/demo.mjs "$@"
