# syntax=docker/dockerfile:1
# Arbiter's image: `node dist/cli/main.js`, production dependencies only, non-root.
#   docker build -t arbiter:dev .
#   docker run --rm -p 8080:8080 -v $PWD/examples:/etc/arbiter:ro arbiter:dev \
#     serve --manifests /etc/arbiter/manifests --api-keys /etc/arbiter/api-keys.yaml
# test/ship/dockerfile.test.ts runs the deps and runtime stages' steps as written.

# Build: compile TypeScript with the dev dependencies (output is plain JavaScript).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only (all pure JavaScript), installed on the runtime's base.
FROM node:20-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# Runtime: node, node_modules, dist/ and package.json (read for the version). Nothing
# writes to the image at run time: give --data-dir a volume (the chart uses an emptyDir
# with a read-only root filesystem).
FROM node:20-alpine
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/dist ./dist
RUN mkdir -p /var/lib/arbiter && chown 1000:1000 /var/lib/arbiter
# The image's `node` user, by number so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
# For plain Docker; Kubernetes uses the chart's probes (/healthz, /readyz) instead.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve", "--api-keys", "/etc/arbiter/api-keys.yaml", "--data-dir", "/var/lib/arbiter", "--port", "8080"]
