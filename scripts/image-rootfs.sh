#!/usr/bin/env bash
# The Debian part of the daemon's image: a bookworm root filesystem holding only what Node's binary
# links against (libc6, libgcc-s1, libstdc++6 and gcc-12-base, their one dependency), made with
# mmdebstrap from deb.debian.org and its security suite, plus the raven user (10001:10001), the
# directories the daemon uses and a dpkg status file naming each package (for image scanners;
# the versions it names are those of the files kept, though not every file of libc6 is kept).
# No shell, no package manager, no CA bundle (Node carries its own; NODE_EXTRA_CA_CERTS adds one).
# scripts/image.sh and the Dockerfile both run it, so the two images hold the same Debian files.
# Usage: scripts/image-rootfs.sh OUT_DIR   (as root; OUT_DIR must not exist or be empty)
set -euo pipefail
out="${1:?usage: image-rootfs.sh OUT_DIR}"
command -v mmdebstrap >/dev/null || { echo "image-rootfs: mmdebstrap is required (apt-get install mmdebstrap)" >&2; exit 1; }

# --variant=extract unpacks the packages without running their maintainer scripts (none of these
# needs one in an image), so no dpkg, shell or apt is installed to run them.
mmdebstrap --quiet --mode=root --variant=extract --include=libc6,libgcc-s1,libstdc++6 \
  --extract-hook='for deb in "$1"/var/cache/apt/archives/*.deb; do
      dpkg-deb --field "$deb" | sed "1a Status: install ok installed"; echo; done >"$1/var/lib/dpkg/status"' \
  bookworm "$out" \
  'deb http://deb.debian.org/debian bookworm main' \
  'deb http://deb.debian.org/debian bookworm-updates main' \
  'deb http://deb.debian.org/debian-security bookworm-security main'
# What mmdebstrap leaves for apt and dpkg, the device nodes (the runtime mounts /dev) and the
# packages' documentation; /var/lib/dpkg/status stays.
(cd "$out" && rm -rf etc/apt etc/dpkg etc/hostname etc/resolv.conf etc/fstab dev var/cache var/lib/apt var/log \
  usr/share/doc usr/share/gcc usr/share/gdb usr/share/lintian &&
  find var/lib/dpkg -mindepth 1 -not -name status -exec rm -rf {} +)
# libc6's files that Node never loads (9.3 of its 12.9 MB): glibc's iconv converters (gconv; Node
# converts text with its own ICU), libmvec (the vector maths of -ffast-math builds; Node's binary
# does not link it), NIS (libnsl) and the debugging and profiling preloads. What stays is what
# `ldd node` names plus the small libraries glibc may load on its own (NSS, resolver).
(cd "$out" && rm -rf usr/lib/x86_64-linux-gnu/gconv &&
  cd lib/x86_64-linux-gnu && rm -f libmvec.so.1 libnsl.so.1 libBrokenLocale.so.1 \
  libc_malloc_debug.so.0 libmemusage.so libpcprofile.so libthread_db.so.1)

# The user the image runs as; a numeric USER in the image config, so runAsNonRoot can verify it
# without this file, which is here for tools that look a uid up (and for $HOME).
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nraven:x:10001:10001:raven:/var/lib/raven:/usr/sbin/nologin\n' >"$out/etc/passwd"
printf 'root:x:0:\nraven:x:10001:\n' >"$out/etc/group"
# glibc's getaddrinfo (Node's dns.lookup): the hosts file first, then DNS.
printf 'hosts: files dns\n' >"$out/etc/nsswitch.conf"
# /etc/raven: the config (a ConfigMap in a pod); /var/lib/raven: the state (a volume); /tmp.
mkdir -p "$out/etc/raven" "$out/var/lib/raven" "$out/tmp"
chown 10001:10001 "$out/var/lib/raven"
chmod 1777 "$out/tmp"
