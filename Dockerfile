# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime stage: production dependencies and dist/ only, as a non-root user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY crds ./crds
USER node
EXPOSE 8080
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve", "--manifests", "/etc/arbiter/manifests", "--api-keys", "/etc/arbiter/api-keys.yaml", "--data-dir", "/var/lib/arbiter", "--port", "8080"]
