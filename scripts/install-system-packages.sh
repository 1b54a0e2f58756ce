#!/usr/bin/env bash
# Install the Debian packages the project needs when they are missing: openssl (test certificates)
# the OpenStack lab (Neutron, Octavia, RabbitMQ, SQLite) the translator's tests run against, and the
# servers the sinks' tests run against (PostgreSQL, NATS with JetStream, Redis, rsyslog with its TLS
# module, Exim as the mail server), Chromium (the web view's tests open the page in it, driven by
# playwright-core), zsh and fish (the completion tests load raven's completion scripts into each
# shell), and prometheus for its promtool (the alerting rules in deploy/prometheus are tested with
# `promtool test rules`; no Prometheus server is started), and what builds and runs the daemon's
# container image without a container daemon (`npm run image`): mmdebstrap, buildah, podman,
# runc (see test/harness/image.ts for why not crun alone) and binutils' strip.
# Run as root (CI is); otherwise it prints the apt-get command to run. Idempotent and quiet.
set -euo pipefail

missing=()
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
command -v git >/dev/null || missing+=(git)
# script(1): the CLI's terminal tests run `raven watch` under a pseudo-terminal.
command -v script >/dev/null || missing+=(bsdutils)
command -v strip >/dev/null || missing+=(binutils)
for pkg in neutron-server octavia-api octavia-worker rabbitmq-server sqlite3 postgresql nats-server redis-server \
  rsyslog rsyslog-gnutls exim4-daemon-light chromium zsh fish prometheus mmdebstrap buildah podman runc; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing Debian packages: ${missing[*]}" >&2
  echo "setup: install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "setup: installing Debian packages: ${missing[*]}"
start=$(date +%s)
# Package scripts must not start system-wide services (the lab starts its own, on loopback only).
own_policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && own_policy=1
fi
apt_log=$(mktemp)
status=0
{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1 || status=$?
[ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
if [ "$status" -ne 0 ]; then
  cat "$apt_log"
  rm -f "$apt_log"
  exit "$status"
fi
rm -f "$apt_log"
echo "setup: packages installed in $(( $(date +%s) - start )) s"
