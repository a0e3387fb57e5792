# workspace-mcp: Streamable HTTP MCP server for a read-only workspace. It refuses to start on a
# non-loopback address without auth, so give it the sha256 of a token (README, "Deploy"):
#   docker build -t workspace-mcp .
#   docker run --rm -p 127.0.0.1:3000:3000 -e WORKSPACE_MCP_AUTH_TOKENS="me:<sha256 of the token>" \
#     --read-only --tmpfs /tmp -v "$PWD:/workspace:ro" workspace-mcp
# Without a mount it serves its own docs/ (copied to /workspace). Configuration: WORKSPACE_MCP_*
# variables (README). Behind a proxy, set WORKSPACE_MCP_ALLOWED_HOSTS to the names clients use.
# bash docker/check.sh builds this image and checks it runs as described.

# ---- build: full dependencies, tsc + esbuild bundle, then drop devDependencies
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
# The build parses the shipped YAML (docs/) into a table the bin reads instead of loading a YAML parser.
COPY docs ./docs
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: production node_modules, the built bin, docs; runs as the image's `node` user
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    WORKSPACE_MCP_HOST=0.0.0.0 \
    WORKSPACE_MCP_PORT=3000 \
    WORKSPACE_MCP_ROOT=/workspace \
    WORKSPACE_MCP_ALLOWED_HOSTS=localhost,127.0.0.1 \
    WORKSPACE_MCP_STATE_DIR=/var/lib/workspace-mcp
WORKDIR /app
# git for the history tools (run hardened, read-only; a mounted repository owned by another uid is fine).
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
# Everything below stays owned by root: the server process can read it, never change it.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY docs ./docs
COPY docs /workspace
# The code index's folder: a volume (an anonymous one unless you name one), so a read-only root filesystem
# still keeps it, sized by disk and not by a tmpfs. Replicas mount a published index read-only here
# (WORKSPACE_MCP_CODE_INDEX=shared; docker/compose.yaml, docker/k8s/).
RUN mkdir -p /var/lib/workspace-mcp && chown node:node /var/lib/workspace-mcp
VOLUME /var/lib/workspace-mcp
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 here; the bin handles SIGTERM (drains, exits 0) so `docker stop` is prompt.
CMD ["node", "dist/bin/cli.js", "serve"]
