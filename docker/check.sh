#!/usr/bin/env bash
# docker/check.sh: builds the image from the Dockerfile and runs it the way it is meant to run, then
# checks it: not root, read-only root filesystem, the workspace mounted read-only, /healthz, an MCP
# call without a token refused (401) and one with a token served (a file of the mounted workspace
# read back, and its git history listed), the image's HEALTHCHECK, and a stop that drains and exits 0.
#
#   bash docker/check.sh            # docker when a daemon answers, else buildah + podman (root)
#   ENGINE=podman bash docker/check.sh
#
# Machines without a registry (CI here) cannot pull FROM node:22-bookworm-slim: with podman the
# script then builds a stand-in under that name from Debian (debootstrap, from the machine's own apt
# mirror) with this machine's node and npm in it, and says so. Knobs: ENGINE, IMAGE, PORT, LAB (podman
# storage and the stand-in), KEEP=1 (leave the container running).
set -Eeuo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-localhost/workspace-mcp:check}
NAME=workspace-mcp-check
PORT=${PORT:-18090}
LAB=${LAB:-/tmp/workspace-mcp-check}
BASE=$(awk 'toupper($1) == "FROM" { print $2; exit }' Dockerfile)

say() { printf '\n== %s\n' "$*"; }
die() { printf '\ncontainer check FAILED: %s\n' "$*" >&2; exit 1; }
now() { date +%s; }
started=$(now)

# ---------------------------------------------------------------- the engine
if [ -z "${ENGINE:-}" ]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then ENGINE=docker; else ENGINE=podman; fi
fi
say "engine: $ENGINE"

if [ "$ENGINE" = podman ]; then
  [ "$(id -u)" = 0 ] || die "podman here runs rootful: run as root, or with a Docker daemon (ENGINE=docker)"
  need=()
  for p in buildah podman runc debootstrap uidmap netavark aardvark-dns iptables; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    say "apt-get install ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  # Storage and settings of our own, never the machine's. runc, not crun: crun refuses hybrid cgroups,
  # and no limit above this process's own hard ones can be set here.
  mkdir -p "$LAB/storage" "$LAB/run"
  export CONTAINERS_STORAGE_CONF=$LAB/storage.conf CONTAINERS_CONF=$LAB/containers.conf CONTAINERS_REGISTRIES_CONF=$LAB/registries.conf
  printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$LAB" "$LAB" >"$CONTAINERS_STORAGE_CONF"
  nofile=$(ulimit -Hn); [ "$nofile" = unlimited ] && nofile=1048576
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=32768:32768"]\n[engine]\nruntime = "runc"\n' "$nofile" "$nofile" >"$CONTAINERS_CONF"
  printf 'unqualified-search-registries = ["docker.io"]\nshort-name-mode = "permissive"\n' >"$CONTAINERS_REGISTRIES_CONF"
  export BUILDAH_RUNTIME=runc
  # podman without systemd says so on every run and stop; that line is all it is.
  ctr() { podman "$@" 2> >(grep -v 'systemd connection' >&2); }
else
  ctr() { docker "$@"; }
fi

# ---------------------------------------------------------------- the base image
standin() {
  say "no $BASE here and no registry to pull it from: building a stand-in (Debian bookworm, this machine's node $(node -v))"
  local root=$LAB/rootfs mirror
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || die "no apt mirror configured for debootstrap"
  if [ ! -f "$root/.done" ]; then
    rm -rf "$root"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$LAB/debootstrap.log" 2>&1 || { tail -5 "$LAB/debootstrap.log"; die "debootstrap"; }
    touch "$root/.done"
  fi
  # Where the official image keeps them, and its user: node, uid and gid 1000.
  install -D -m 0755 "$(readlink -f "$(command -v node)")" "$root/usr/local/bin/node"
  local npm_dir; npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  rm -rf "$root/usr/local/lib/node_modules/npm" && mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  chroot "$root" getent passwd node >/dev/null || { chroot "$root" groupadd --gid 1000 node && chroot "$root" useradd --uid 1000 --gid node --create-home node; }
  tar -C "$root" --exclude=./.done -c . | ctr import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change 'CMD ["node"]' - "$BASE" >/dev/null
}
if [ "$ENGINE" = podman ] && ! ctr image exists "$BASE"; then
  timeout 60 podman pull -q "$BASE" >/dev/null 2>&1 || standin
fi

# ---------------------------------------------------------------- build
say "build $IMAGE"
if [ "$ENGINE" = podman ]; then
  extra=()
  # Where TLS is intercepted (this sandbox), npm inside the build needs the machine's CA: it goes in
  # for the RUN steps only, as npm's global config, and never into a layer.
  ca=${NODE_EXTRA_CA_CERTS:-}
  if [ -n "$ca" ] && [ -f "$ca" ]; then
    mkdir -p "$LAB/ca" && cp "$ca" "$LAB/ca/ca.crt" && printf 'cafile=/usr/local/etc/ca.crt\n' >"$LAB/ca/npmrc"
    extra+=(--volume "$LAB/ca:/usr/local/etc:ro")
  fi
  buildah bud --isolation chroot --network host --pull=never --format docker --layers --force-rm "${extra[@]}" -t "$IMAGE" . >"$LAB/build.log" 2>&1 \
    || { tail -30 "$LAB/build.log"; die "build"; }
else
  docker build -t "$IMAGE" . || die "build"
fi

# ---------------------------------------------------------------- run
workspace=$(mktemp -d)
chmod 755 "$workspace"
marker="served from a read-only mount $(date +%s)"
printf '# Check\n\n%s\n' "$marker" >"$workspace/CHECK.md"
chmod 644 "$workspace/CHECK.md"
# A repository owned by this (host) user, read by the container's node user: the history tools must serve it.
git -C "$workspace" init -q
git -C "$workspace" add CHECK.md
git -C "$workspace" -c user.name=check -c user.email=check@example.com commit -qm "container check commit"
chmod -R a+rX "$workspace/.git"
token="check-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
sha=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
cleanup() {
  [ -n "${KEEP:-}" ] || ctr rm -f "$NAME" >/dev/null 2>&1 || true
  rm -rf "$workspace"
}
trap cleanup EXIT
ctr rm -f "$NAME" >/dev/null 2>&1 || true

say "run: read-only root filesystem, workspace mounted read-only, auth on, port 127.0.0.1:$PORT"
ctr run -d --name "$NAME" -p "127.0.0.1:$PORT:3000" --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
  -v "$workspace:/workspace:ro" -e WORKSPACE_MCP_AUTH_TOKENS="check:$sha" "$IMAGE" >/dev/null || die "run"

# The HTTP checks, with the node this machine has (slim images have no curl, and we need none).
PORT=$PORT TOKEN=$token MARKER=$marker node --input-type=module -e '
const base = `http://127.0.0.1:${process.env.PORT}`
const fail = (why) => { console.error(why); process.exit(1) }
let up = false
for (let i = 0; i < 120 && !up; i++) {
  try { up = (await fetch(`${base}/healthz`)).ok } catch {}
  if (!up) await new Promise(r => setTimeout(r, 250))
}
if (!up) fail("no answer on /healthz")
console.log("GET /healthz: 200")
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "check", version: "1" } } }
const anonymous = await fetch(`${base}/mcp`, { method: "POST", headers, body: JSON.stringify(init) })
if (anonymous.status !== 401) fail(`initialize without a token: ${anonymous.status}, expected 401`)
console.log(`POST /mcp without a token: 401 (${anonymous.headers.get("www-authenticate")})`)
const auth = { ...headers, authorization: `Bearer ${process.env.TOKEN}` }
const opened = await fetch(`${base}/mcp`, { method: "POST", headers: auth, body: JSON.stringify(init) })
const session = opened.headers.get("mcp-session-id")
if (opened.status !== 200 || session === null) fail(`initialize with the token: ${opened.status} ${await opened.text()}`)
console.log(`POST /mcp initialize with the token: 200, session ${session.slice(0, 8)}…`)
const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_files", arguments: { files: [{ path: "CHECK.md" }] } } }
const read = await (await fetch(`${base}/mcp`, { method: "POST", headers: { ...auth, "mcp-session-id": session }, body: JSON.stringify(call) })).text()
if (!read.includes(process.env.MARKER)) fail(`read_files did not return the mounted file: ${read.slice(0, 300)}`)
console.log("tools/call read_files: the mounted workspace file came back")
const history = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "git_log", arguments: {} } }
const log = await (await fetch(`${base}/mcp`, { method: "POST", headers: { ...auth, "mcp-session-id": session }, body: JSON.stringify(history) })).text()
if (!log.includes("container check commit")) fail(`git_log did not list the mounted repository: ${log.slice(0, 300)}`)
console.log("tools/call git_log: the history of the mounted repository came back")
' || { ctr logs "$NAME" 2>&1 | tail -20; die "HTTP checks"; }

uid=$(ctr exec "$NAME" id -u)
[ "$uid" != 0 ] || die "the container runs as root"
echo "process uid in the container: $uid"
if ctr exec "$NAME" sh -c 'touch /app/written 2>/dev/null'; then die "the root filesystem is writable"; fi
echo "root filesystem: read-only"
if [ "$ENGINE" = podman ]; then
  ctr healthcheck run "$NAME" >/dev/null || die "the image's HEALTHCHECK failed"
else
  for _ in $(seq 1 60); do [ "$(docker inspect -f '{{.State.Health.Status}}' "$NAME")" = healthy ] && break; sleep 1; done
  [ "$(docker inspect -f '{{.State.Health.Status}}' "$NAME")" = healthy ] || die "the image's HEALTHCHECK failed"
fi
echo "HEALTHCHECK: healthy"

if [ -z "${KEEP:-}" ]; then
  ctr stop -t 15 "$NAME" >/dev/null
  code=$(ctr inspect -f '{{.State.ExitCode}}' "$NAME")
  [ "$code" = 0 ] || { ctr logs "$NAME" 2>&1 | tail -10; die "stop: exit code $code, expected 0 (drained)"; }
  echo "stop: drained, exit code 0"
fi

# ---------------------------------------------------------------- the shipped layout over a real tree
# docker/compose.yaml's own limits, tmpfs sizes and volumes, read from the file: its indexer builds the code
# index of a real tree (Linux 6.1's drivers/net, 5,123 source files) into a volume, and a replica mounts that
# read-only (--code-index shared) and answers find_symbol and search_code through the port.
say "the shipped layout: docker/compose.yaml's indexer and replica, its limits, over Linux drivers/net"
read -r idx_mem idx_threads idx_tmp rep_mem rep_tmp < <(node --input-type=module -e '
import { readFileSync } from "node:fs"
import { parse } from "yaml"
const { indexer, mcp } = parse(readFileSync("docker/compose.yaml", "utf8")).services
const tmp = (service) => service.tmpfs.find(t => t.startsWith("/tmp:")).slice(5)
console.log(indexer.deploy.resources.limits.memory, indexer.environment.WORKSPACE_MCP_INDEX_THREADS, tmp(indexer), mcp.deploy.resources.limits.memory, tmp(mcp))') \
  || die "reading docker/compose.yaml"
echo "indexer: memory $idx_mem, $idx_threads parser threads, /tmp tmpfs $idx_tmp; replica: memory $rep_mem, /tmp tmpfs $rep_tmp"

# The tree: the bench corpus when it is unpacked, else drivers/net alone out of Debian's linux-source-6.1.
tree=bench/.corpus/linux-source-6.1/drivers/net
if [ ! -d "$tree" ]; then
  tree=$LAB/tree/linux-source-6.1/drivers/net
  if [ ! -d "$tree" ]; then
    [ -f /usr/src/linux-source-6.1.tar.xz ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends linux-source-6.1 >/dev/null; } || die "apt-get install linux-source-6.1"
    mkdir -p "$LAB/tree" && tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$LAB/tree" linux-source-6.1/drivers/net || die "unpacking drivers/net"
  fi
fi
tree=$(cd "$tree" && pwd)
sources=$(find "$tree" -name '*.[ch]' | wc -l)
[ "$sources" -ge 5000 ] || die "the tree has $sources C files, fewer than 5,000"
volume=workspace-mcp-check-index
ctr rm -f "$NAME-indexer" "$NAME-replica" >/dev/null 2>&1 || true
ctr volume rm -f "$volume" >/dev/null 2>&1 || true
ctr volume create "$volume" >/dev/null || die "volume create"
cleanup_layout() {
  [ -n "${KEEP:-}" ] || { ctr rm -f "$NAME-indexer" "$NAME-replica" >/dev/null 2>&1; ctr volume rm -f "$volume" >/dev/null 2>&1; } || true
  cleanup
}
trap cleanup_layout EXIT

built_at=$(now)
ctr run --name "$NAME-indexer" --memory "$idx_mem" --memory-swap "$idx_mem" --read-only --tmpfs "/tmp:$idx_tmp" --cap-drop ALL --security-opt no-new-privileges \
  -v "$tree:/workspace:ro" -v "$volume:/var/lib/workspace-mcp" -e WORKSPACE_MCP_INDEX_THREADS="$idx_threads" -e WORKSPACE_MCP_LOG_LEVEL=warn \
  "$IMAGE" node dist/bin/cli.js index >"$LAB/indexer.out" 2>"$LAB/indexer.err" || { tail -20 "$LAB/indexer.err"; die "the indexer failed within $idx_mem"; }
[ "$(ctr inspect -f '{{.HostConfig.Memory}}' "$NAME-indexer")" != 0 ] || die "the indexer ran without its memory limit"
echo "indexer ($sources C files, $(( $(now) - built_at )) s, within $idx_mem): $(cat "$LAB/indexer.out")"
[ "$(ctr inspect -f '{{.State.OOMKilled}}' "$NAME-indexer")" = false ] || die "the indexer was killed for memory"

ctr run -d --name "$NAME-replica" -p "127.0.0.1:$((PORT + 1)):3000" --memory "$rep_mem" --memory-swap "$rep_mem" --read-only --tmpfs "/tmp:$rep_tmp" \
  --cap-drop ALL --security-opt no-new-privileges -v "$tree:/workspace:ro" -v "$volume:/var/lib/workspace-mcp:ro" \
  -e WORKSPACE_MCP_CODE_INDEX=shared -e WORKSPACE_MCP_MODE=stateless -e WORKSPACE_MCP_AUTH_TOKENS="check:$sha" "$IMAGE" >/dev/null || die "run the replica"
PORT=$((PORT + 1)) TOKEN=$token node --input-type=module -e '
const base = `http://127.0.0.1:${process.env.PORT}`
const fail = (why) => { console.error(why); process.exit(1) }
let up = false
for (let i = 0; i < 120 && !up; i++) {
  try { up = (await fetch(`${base}/healthz`)).ok } catch {}
  if (!up) await new Promise(r => setTimeout(r, 250))
}
if (!up) fail("the replica does not answer /healthz")
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${process.env.TOKEN}` }
const call = async (name, args) => {
  const started = performance.now()
  const res = await fetch(`${base}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }) })
  return { body: await res.json(), ms: performance.now() - started }
}
const symbol = await call("find_symbol", { name: "e1000_probe" })
const where = symbol.body.result?.structuredContent?.definitions?.[0]?.path
if (where !== "ethernet/intel/e1000/e1000_main.c") fail(`find_symbol e1000_probe: ${JSON.stringify(symbol.body).slice(0, 400)}`)
console.log(`find_symbol e1000_probe, on the first call of the replica: ${where} (${symbol.ms.toFixed(0)} ms)`)
const code = await call("search_code", { query: "transmit timeout reset" })
const hits = code.body.result?.structuredContent?.results ?? []
if (code.body.result?.isError === true || hits.length === 0) fail(`search_code: ${JSON.stringify(code.body).slice(0, 400)}`)
console.log(`search_code "transmit timeout reset": ${hits.length} chunks, first ${hits[0].path} (${code.ms.toFixed(0)} ms)`)
' || { ctr logs "$NAME-replica" 2>&1 | tail -20; die "the replica over the shared index"; }
echo "replica: $(ctr stats --no-stream --format '{{.MemUsage}}' "$NAME-replica" 2>/dev/null || echo 'memory use not reported here')"
ctr stop -t 15 "$NAME-replica" >/dev/null
say "container check: OK ($ENGINE, $(( $(now) - started )) s)"
