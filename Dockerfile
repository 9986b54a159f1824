# sonde's container image. Build: docker build -t sonde .
# Run:   docker run -v /etc/sonde:/etc/sonde:ro -p 9104:9104 sonde
# The config is /etc/sonde/sonde.yaml; docs/deploy.md has the details.

# ---- build: the full toolchain compiles the TypeScript and packs what runs ---------------
FROM node:24-bookworm AS build
WORKDIR /src
COPY . .
# npm ci runs `prepare` (tsc, then the bundle: scripts/build-bundle.mjs); npm pack keeps
# exactly package.json's `files`.
RUN npm ci --no-audit --no-fund \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && mkdir /pkg && tar -xzf /tmp/sonde-*.tgz -C /pkg \
 && cp package-lock.json /pkg/package/

# ---- runtime: a slim Node LTS, the packed files and the runtime dependencies only --------
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    SONDE_HEALTHZ=http://127.0.0.1:7522/healthz \
    SONDE_EXPORTER_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /pkg/package/ /app/
# --ignore-scripts: `prepare` would need the compiler, and no runtime dependency builds anything.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && mkdir -p /etc/sonde
# The image's unprivileged user (uid 1000). sonde writes no file but Node's compile cache of
# its modules under the temp dir (skipped where that is read-only: a slower start, nothing else).
USER node
EXPOSE 7522 9104
# Liveness: the API's /healthz, asked by node itself (the image has no curl). Set
# SONDE_HEALTHZ when api.bind is not the default.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.SONDE_HEALTHZ).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "--max-semi-space-size=4", "--no-maglev", "/app/dist/bundle/bin/sonde.js"]
CMD ["--config", "/etc/sonde/sonde.yaml"]
