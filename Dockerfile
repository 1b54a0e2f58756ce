# The raven daemon: `raven run -c /etc/raven/raven.yaml`, as deploy/deployment.yaml runs it.
# Build it from the repository root with any OCI image builder (see docs/deployment.md).
# Two stages: the build needs the TypeScript compiler; the image holds only dist/ and the
# production dependencies (all pure JavaScript or WebAssembly: nothing is compiled at install).

FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

FROM node:20-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# `raven` on the PATH, as the npm package's bin would be.
RUN ln -s /app/dist/cli/main.js /usr/local/bin/raven && chmod +x /app/dist/cli/main.js \
  && groupadd --gid 10001 raven && useradd --uid 10001 --gid raven --no-create-home --shell /usr/sbin/nologin raven \
  && mkdir -p /var/lib/raven /etc/raven && chown raven:raven /var/lib/raven
# A numeric user, so runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
# The checkpoint's default place; mount a persistent volume here.
VOLUME /var/lib/raven
EXPOSE 9090
# Node handles SIGTERM itself (first signal drains, a second exits at once); raven starts no
# child processes in a pod, so no init process is needed to reap them.
ENTRYPOINT ["raven", "run", "-c", "/etc/raven/raven.yaml"]
