#!/usr/bin/env bash
# Builds tessera-render (kustomize's and Helm's own rendering, for the CLI's
# tests) once per version of its sources, into
#   ${TESSERA_CACHE_DIR:-~/.cache/tessera}/tools/render-<hash>/tessera-render
# under a lock; prints that path on its last line. Needs Go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)
cache=${TESSERA_CACHE_DIR:-$HOME/.cache/tessera}/tools
out="$cache/render-$hash/tessera-render"
if [ -x "$out" ]; then echo "$out"; exit 0; fi
command -v go >/dev/null || { echo "tessera: Go is needed to build tessera-render (kustomize and helm rendering for the CLI's tests)" >&2; exit 3; }
mkdir -p "$cache"
exec 9>"$cache/.render.lock"
flock 9
if [ -x "$out" ]; then echo "$out"; exit 0; fi
echo "tessera: building tessera-render (kustomize api v0.21.2, helm v4.3.2; first run only, about a minute)" >&2
export GOFLAGS="-mod=mod -trimpath" GOTOOLCHAIN=local CGO_ENABLED=0
mkdir -p "$(dirname "$out")"
(cd "$here" && go build -ldflags "-s -w" -o "$out.partial.$$" .)
mv "$out.partial.$$" "$out"
echo "$out"
