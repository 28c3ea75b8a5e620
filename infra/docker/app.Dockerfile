# syntax=docker/dockerfile:1
# One image for every Trawl app (apps/<role>/*): the workspace with its production dependencies only, the
# services compiled at build time (`trawl build` → .trawl/build/<app>/main.mjs), as `trawl up`
# runs them on a developer machine. docker-compose.yml picks the app with its `command`, e.g.
# ["node", ".trawl/build/worker/main.mjs"]. Node 24 LTS; Trawl needs Node 22 or later.
FROM node:24-bookworm-slim

# Chromium for the worker's browser fetches (puppeteer-core drives the system browser; Puppeteer's
# own download is skipped). In every app's image: one shared layer beats one image per app.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*

ENV CHROMIUM_PATH=/usr/bin/chromium \
    PUPPETEER_SKIP_DOWNLOAD=true \
    NPM_CONFIG_UPDATE_NOTIFIER=false

WORKDIR /app
# Manifests first, so that `npm ci` is cached until a dependency changes. Each workspace needs its
# package.json in place for `npm ci`; the bind mount brings them all without listing them here.
COPY package.json package-lock.json .npmrc ./
RUN --mount=type=bind,target=/ctx \
    cd /ctx && find . -name package.json -not -path '*/node_modules/*' -not -path './package.json' \
      -exec sh -c 'mkdir -p "/app/$(dirname "$1")" && cp "$1" "/app/$1"' _ {} \;
# No devDependencies (vitest, Crawlee, the embedded ClickHouse of the tests): what ships imports
# only dependencies, which `npm run lint` (scripts/check-dependencies.ts) keeps so; `trawl build`
# needs only the CLI's own dependencies (esbuild).
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

COPY . .
# Compiled, not under tsx: tsx's loader would stay in every service (~35 MB of RSS each).
RUN node apps/tools/cli/bin/trawl.js build

# Every app runs as an unprivileged user: the code and its dependencies stay root's (read-only to
# the apps), only the state directory is theirs. The worker then starts Chromium as this same user
# (only root can switch users), sandboxed where the container may create user namespaces: Docker's
# default seccomp profile forbids that, and the worker logs `browserSandbox` off with the reason.
RUN groupadd --system --gid 10001 trawl \
 && useradd --system --uid 10001 --gid trawl --home-dir /app/.trawl --shell /usr/sbin/nologin trawl \
 && mkdir -p /app/.trawl && chown trawl:trawl /app/.trawl
USER trawl

# tini reaps Chromium's children and forwards SIGTERM, so apps shut down cleanly (commit, close).
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", ".trawl/build/api/main.mjs"]
