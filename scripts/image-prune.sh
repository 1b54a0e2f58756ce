#!/usr/bin/env bash
# The files of the image's /app that Node never reads when it runs the daemon, removed: in dist/,
# the declaration files and source maps (Node reads neither; without --enable-source-maps a stack
# trace names dist/'s JavaScript either way); in node_modules/, the packages' TypeScript (their
# sources and declarations), source maps, Markdown (READMEs, changelogs, docs), their tests,
# benchmarks and examples, and their CI files. Every licence file and all JavaScript, JSON and
# WebAssembly outside those directories stay. No module of any production dependency refers into
# a removed directory (test/e2e/image.e2e.test.ts imports every module of dist/ in the image).
# scripts/image.sh and the Dockerfile both run it, so the two images hold the same files.
# Usage: scripts/image-prune.sh APP_DIR   (APP_DIR holds dist/ and node_modules/)
set -euo pipefail
app="${1:?usage: image-prune.sh APP_DIR}"
[ -d "$app/dist" ] && [ -d "$app/node_modules" ] ||
  { echo "image-prune: $app has no dist/ or no node_modules/" >&2; exit 1; }

find "$app/dist" -type f \( -name '*.d.ts' -o -name '*.map' \) -delete
# Directories by name ("doc" is not among them: yaml's runtime code is in dist/doc).
find "$app/node_modules" -depth -type d \( -name test -o -name tests -o -name __tests__ \
  -o -name benchmark -o -name benchmarks -o -name example -o -name examples -o -name docs \
  -o -name .github \) -exec rm -rf {} +
find "$app/node_modules" -type f \( -name '*.ts' -o -name '*.cts' -o -name '*.mts' -o -name '*.tsx' \
  -o -name '*.map' -o -name '*.md' -o -name '*.markdown' \) -delete
# What the removals leave empty.
find "$app/dist" "$app/node_modules" -depth -mindepth 1 -type d -empty -delete
