# syntax=docker/dockerfile:1
# Build: docker build -t mcp-gateway .
# Run:   docker run -p 8080:8080 -e MCP_GATEWAY_API_KEY="$(openssl rand -base64 32)" mcp-gateway
#        serves the two reference servers behind that key; your own config: docs/deployment.md, "The container".
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds, and the sources are not here yet; the build runs below.
RUN npm ci --ignore-scripts --no-audit --no-fund
# The folders tsconfig.build.json compiles (a test checks that every one of them is copied).
COPY tsconfig.json tsconfig.build.json ./
COPY protocol ./protocol
COPY infra ./infra
COPY src ./src
COPY bridge ./bridge
COPY policy ./policy
COPY cache ./cache
RUN npm run build

FROM node:22-bookworm-slim
ENV NODE_ENV=production
# tini at PID 1 reaps the processes stdio servers leave behind and passes signals on to the gateway, under
# Docker, compose and Kubernetes alike (Kubernetes has no --init). -s: it also works below another init.
# bubblewrap and socat: sandboxed stdio servers (`sandbox:`, docs/sandbox.md); prlimit and setpriv are in
# util-linux, which the base image has.
RUN apt-get update && apt-get install -y --no-install-recommends tini bubblewrap socat && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# The two reference servers container.config.yaml serves are dev dependencies of the package (an npm install
# of it does not carry their 78 MB); the image makes them dependencies and installs the versions the lockfile pins.
RUN node -e "const fs=require('fs');const p=JSON.parse(fs.readFileSync('package.json'));for(const n of ['@modelcontextprotocol/server-everything','@modelcontextprotocol/server-memory']){p.dependencies[n]=p.devDependencies[n];}fs.writeFileSync('package.json',JSON.stringify(p))" \
  && npm install --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY gateway.config.yaml gateway.config.schema.json ./
COPY deploy/container.config.yaml ./
# The memory server writes its graph beside the config; give the unprivileged user that folder.
RUN chown node:node /app
USER node
# Inside a container, loopback is unreachable from outside: listen on all interfaces (see docs/deployment.md).
ENV MCP_GATEWAY_HOST=0.0.0.0 MCP_GATEWAY_PORT=8080
EXPOSE 8080
# /healthz answers while the process serves; /readyz (for orchestrators) also waits for the upstreams.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.MCP_GATEWAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "-s", "--"]
# Started with no arguments, the image serves container.config.yaml behind MCP_GATEWAY_API_KEY, and without
# that key refuses in one line rather than listen unprotected. `exec` makes the gateway the process that
# tini passes the signals to. Any command given to `docker run` (for your own config) replaces this one.
CMD ["sh", "-c", "if [ ${#MCP_GATEWAY_API_KEY} -lt 16 ]; then echo 'mcp-gateway: set MCP_GATEWAY_API_KEY to an API key of at least 16 characters (openssl rand -base64 32), or run the image with your own config (docs/deployment.md)' >&2; exit 2; fi; exec node dist/src/cli.js --config container.config.yaml"]
