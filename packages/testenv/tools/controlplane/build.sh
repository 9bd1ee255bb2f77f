#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy, once, into
#   ${TESSERA_CACHE_DIR:-~/.cache/tessera}/controlplane/kube-<ver>_etcd-<ver>/
# under a lock so that parallel runs wait for one build instead of racing.
# With --with-controller-manager (or TESSERA_WITH_CONTROLLER_MANAGER=1) it also
# builds kube-controller-manager at the same version into the same directory;
# it shares most packages with kube-apiserver, so the Go build cache makes it
# the cheaper of the two. With --with-kubectl (or TESSERA_WITH_KUBECTL=1) it
# adds kubectl at the same version the same way (about three minutes on two
# cores once kube-apiserver's packages are in the Go build cache); only the
# tests that run kubectl need it, and they skip without it.
# Prints the directory holding the binaries on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBE_VERSION=$(cat "$here/KUBE_VERSION")
ETCD_VERSION=$(cat "$here/ETCD_VERSION")
with_kcm=${TESSERA_WITH_CONTROLLER_MANAGER:-0}
with_kubectl=${TESSERA_WITH_KUBECTL:-0}
for arg in "$@"; do
  case "$arg" in
    --with-controller-manager) with_kcm=1 ;;
    --with-kubectl) with_kubectl=1 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tessera: build.sh: unknown argument '$arg' (the options are --with-controller-manager and --with-kubectl)" >&2; exit 2 ;;
  esac
done
cache=${TESSERA_CACHE_DIR:-$HOME/.cache/tessera}/controlplane
out="$cache/kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}"
complete() {
  [ -x "$out/kube-apiserver" ] && [ -x "$out/etcd" ] && { [ "$with_kcm" != 1 ] || [ -x "$out/kube-controller-manager" ]; } &&
    { [ "$with_kubectl" != 1 ] || [ -x "$out/kubectl" ]; }
}
if complete; then echo "$out"; exit 0; fi
command -v go >/dev/null || {
  echo "tessera: no control-plane binaries and no Go toolchain to build them. Either install Go, or point KUBEBUILDER_ASSETS (setup-envtest's layout) or TESSERA_CONTROLPLANE_DIR at a directory holding kube-apiserver and etcd (and kube-controller-manager, for tests that start it)." >&2
  exit 3
}
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
echo "tessera: waiting for the control-plane build lock ($cache/.build.lock)" >&2
flock 9
if complete; then echo "$out"; exit 0; fi
export GOFLAGS="-mod=mod -trimpath" GOTOOLCHAIN=local CGO_ENABLED=0
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=${KUBE_VERSION} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=${minor}"
if [ -x "$out/kube-apiserver" ] && [ -x "$out/etcd" ]; then
  # Only optional components are missing: add them beside the others.
  add() {
    local name=$1 start tmp
    start=$(date +%s)
    tmp="$out/.$name.partial.$$"
    echo "tessera: building $name ${KUBE_VERSION} (first time only; a few minutes)" >&2
    (cd "$here/$name" && go build -v -ldflags "$ldflags" -o "$tmp" "k8s.io/kubernetes/cmd/$name") 2>&1 | awk -v n="$name" '{c++; if (c%100==0) printf "  %s: %d packages compiled\n", n, c > "/dev/stderr"}'
    [ -x "$tmp" ] || { echo "tessera: $name build failed; run: cd $here/$name && go build k8s.io/kubernetes/cmd/$name" >&2; exit 1; }
    mv "$tmp" "$out/$name"
    echo "tessera: $name built in $(( $(date +%s) - start ))s into $out" >&2
  }
  if [ "$with_kcm" = 1 ] && [ ! -x "$out/kube-controller-manager" ]; then add kube-controller-manager; fi
  if [ "$with_kubectl" = 1 ] && [ ! -x "$out/kubectl" ]; then add kubectl; fi
  echo "$out"
  exit 0
fi
tmp="$out.partial.$$"
rm -rf "$tmp"; mkdir -p "$tmp"
start=$(date +%s)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=${KUBE_VERSION} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=${minor}"
echo "tessera: building etcd ${ETCD_VERSION} (first run only; progress below)" >&2
(cd "$here/etcd" && go build -v -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3) 2>&1 | awk '{n++; if (n%50==0) printf "  etcd: %d packages compiled\n", n > "/dev/stderr"}'
[ -x "$tmp/etcd" ] || { echo "tessera: etcd build failed" >&2; exit 1; }
echo "tessera: building kube-apiserver ${KUBE_VERSION} (first run only; several minutes)" >&2
(cd "$here/kube-apiserver" && go build -v -ldflags "$ldflags" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver) 2>&1 | awk '{n++; if (n%100==0) printf "  kube-apiserver: %d packages compiled\n", n > "/dev/stderr"}'
[ -x "$tmp/kube-apiserver" ] || { echo "tessera: kube-apiserver build failed" >&2; exit 1; }
if [ "$with_kcm" = 1 ]; then
  kcm_start=$(date +%s)
  echo "tessera: building kube-controller-manager ${KUBE_VERSION} (first run only; shares most packages with kube-apiserver)" >&2
  (cd "$here/kube-controller-manager" && go build -v -ldflags "$ldflags" -o "$tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager) 2>&1 | awk '{n++; if (n%100==0) printf "  kube-controller-manager: %d packages compiled\n", n > "/dev/stderr"}'
  [ -x "$tmp/kube-controller-manager" ] || { echo "tessera: kube-controller-manager build failed" >&2; exit 1; }
  echo "tessera: kube-controller-manager added $(( $(date +%s) - kcm_start ))s" >&2
fi
if [ "$with_kubectl" = 1 ]; then
  kubectl_start=$(date +%s)
  echo "tessera: building kubectl ${KUBE_VERSION} (first run only; shares most packages with kube-apiserver)" >&2
  (cd "$here/kubectl" && go build -v -ldflags "$ldflags" -o "$tmp/kubectl" k8s.io/kubernetes/cmd/kubectl) 2>&1 | awk '{n++; if (n%100==0) printf "  kubectl: %d packages compiled\n", n > "/dev/stderr"}'
  [ -x "$tmp/kubectl" ] || { echo "tessera: kubectl build failed" >&2; exit 1; }
  echo "tessera: kubectl added $(( $(date +%s) - kubectl_start ))s" >&2
fi
rm -rf "$out"; mv "$tmp" "$out"
echo "tessera: control plane built in $(( $(date +%s) - start ))s into $out" >&2
echo "$out"
