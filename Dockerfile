# syntax=docker/dockerfile:1
# Build: docker build -t mcp-gateway .
# Run:   docker run -p 8080:8080 -v $PWD/my.config.yaml:/app/gateway.config.yaml mcp-gateway   (a config with auth:)
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds, and the sources are not here yet; the build runs below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bridge ./bridge
COPY policy ./policy
COPY cache ./cache
RUN npm run build

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY gateway.config.yaml ./
# The memory server writes its graph beside the config; give the unprivileged user that folder.
RUN chown node:node /app
USER node
# Inside a container, loopback is unreachable from outside: listen on all interfaces (see README, Container).
# Listening beyond loopback needs an auth: section: mount a config that has one (README, Container).
ENV MCP_GATEWAY_HOST=0.0.0.0 MCP_GATEWAY_PORT=8080
EXPOSE 8080
# /healthz answers while the process serves; /readyz (for orchestrators) also waits for the upstreams.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.MCP_GATEWAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/cli.js", "--config", "gateway.config.yaml"]
