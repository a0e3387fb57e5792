import t from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ignore from 'ignore'
import { parseAllDocuments } from 'yaml'

// Static checks of the Dockerfile, compose, nginx and Kubernetes files: the rules our builders
// need (shared/tools/container-check.sh builds the image for real, outside the test suite).

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')
const dockerfile = read('Dockerfile')
/** Instructions with continuation lines joined and comments dropped. */
const instructions = dockerfile.replace(/\\\n/g, ' ').split('\n').map(l => l.trim()).filter(l => l !== '' && !l.startsWith('#'))
const yamlDocs = (path: string): Array<Record<string, any>> => parseAllDocuments(read(path)).map(d => {
  if (d.errors.length > 0) throw d.errors[0]
  return d.toJS()
})

t.test('Dockerfile uses only what Debian 12 builders (buildah 1.28, docker 20.10) accept', async t => {
  t.notMatch(dockerfile, /^#\s*syntax\s*=/im, 'no # syntax= line (BuildKit would fetch a frontend image)')
  t.notMatch(dockerfile, /<<-?\s*['"]?[A-Z]+/, 'no heredocs')
  t.notMatch(dockerfile, /--link\b/, 'no COPY --link')
})

t.test('Dockerfile: multi-stage, non-root, health-checked, serving the shipped bin', async t => {
  const froms = instructions.filter(l => /^FROM\s/i.test(l))
  t.ok(froms.length >= 2, 'multi-stage')
  for (const from of froms) t.match(from, /^FROM node:\d+-bookworm-slim\b/, 'node:*-bookworm-slim base (what container-check.sh stands in for)')
  const users = instructions.filter(l => /^USER\s/i.test(l))
  t.equal(users.at(-1), 'USER node', 'the runtime stage ends as the non-root node user')
  t.ok(instructions.includes('EXPOSE 3000'), 'EXPOSE 3000')
  const health = instructions.find(l => /^HEALTHCHECK\s/i.test(l)) ?? ''
  t.match(health, /CMD \["node",/, 'HEALTHCHECK probes with node (slim images have no curl)')
  t.match(health, /http:\/\/127\.0\.0\.1:3000\/healthz/, 'HEALTHCHECK hits /healthz')
  const cmd = JSON.parse(instructions.find(l => /^CMD\s/i.test(l))?.slice(4) ?? '[]') as string[]
  t.same(cmd.slice(0, 1), ['node'], 'CMD runs node directly (exec form: it is PID 1 and gets SIGTERM)')
  t.equal(cmd.at(-1), 'serve', 'CMD serves HTTP')
  const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string> }
  t.equal(cmd[1], Object.values(pkg.bin)[0], 'CMD runs the package bin')
  const env = instructions.filter(l => /^ENV\s/i.test(l)).join(' ')
  t.match(env, /WORKSPACE_MCP_HOST=0\.0\.0\.0/, 'binds all interfaces inside the container')
  t.match(env, /WORKSPACE_MCP_ALLOWED_HOSTS=\S+/, 'a non-loopback bind comes with allowed hosts (the server refuses to start otherwise)')
  t.match(env, /WORKSPACE_MCP_ROOT=\/workspace/, 'serves /workspace')
  t.match(env, /WORKSPACE_MCP_STATE_DIR=\/var\/lib\/workspace-mcp/, 'the index in its own folder, not a tmpfs')
  t.ok(instructions.includes('VOLUME /var/lib/workspace-mcp'), 'a volume: writable under a read-only root, sized by disk')
})

t.test('every COPY source exists and is not excluded by .dockerignore', async t => {
  const ig = ignore().add(read('.dockerignore'))
  const copies = instructions.filter(l => /^COPY\s/i.test(l) && !/--from=/.test(l))
  t.ok(copies.length > 0)
  for (const copy of copies) {
    const parts = copy.split(/\s+/).slice(1).filter(p => !p.startsWith('--'))
    for (const source of parts.slice(0, -1)) {
      t.ok(existsSync(join(ROOT, source)), `${source} exists`)
      t.notOk(ig.ignores(source.replace(/\/$/, '')), `${source} is in the build context`)
    }
  }
  for (const heavy of ['node_modules', 'dist', '.git']) t.ok(ig.ignores(heavy), `${heavy} stays out of the build context`)
})

t.test('compose: replicas sharing sessions through Redis behind nginx, auth on, the user\'s workspace read-only', async t => {
  const [compose] = yamlDocs('docker/compose.yaml')
  const { mcp, nginx, redis } = compose.services
  t.equal(mcp.environment.WORKSPACE_MCP_MODE, 'stateful')
  t.equal(mcp.environment.WORKSPACE_MCP_REDIS_URL, 'redis://redis:6379', 'sessions and streams shared through the redis service')
  t.match(mcp.environment.WORKSPACE_MCP_AUTH_TOKENS, /^\$\{WORKSPACE_MCP_AUTH_TOKENS:\?/, 'auth is required: compose refuses to start without tokens')
  t.ok(mcp.deploy.replicas >= 2, 'several replicas')
  t.ok(mcp.deploy.resources.limits.memory, 'memory limit')
  t.equal(mcp.read_only, true, 'read-only root filesystem')
  t.ok(mcp.volumes.includes('$' + '{WORKSPACE_DIR:-..}:/workspace:ro'), 'the workspace the user names (default: this checkout), read-only')
  t.ok(nginx.volumes.some((v: string) => v.startsWith('./nginx.conf:')), 'nginx uses docker/nginx.conf')
  t.ok(nginx.ports.every((p: string) => p.startsWith('127.0.0.1:')), 'published on loopback only')
  t.ok(redis, 'redis service')
  t.match(read('docker/nginx.conf'), /^\s*server mcp:3000;$/m, 'nginx upstream is the mcp service')
})

/** Mebibytes of a compose or Kubernetes memory quantity (512M, 768Mi, 1G). */
const mib = (quantity: string): number => Number(/^(\d+)/.exec(quantity)?.[1]) * (/G/.test(quantity) ? 1024 : 1)

t.test('compose and Kubernetes: one index, built by one job into a volume sized by the formula, read by every replica', async t => {
  const [compose] = yamlDocs('docker/compose.yaml')
  const { mcp, indexer } = compose.services
  t.same(indexer.command, ['node', 'dist/bin/cli.js', 'index'], 'compose: an indexer service builds it')
  t.ok(indexer.volumes.includes('index:/var/lib/workspace-mcp'), 'into the named volume')
  t.ok(mcp.volumes.includes('index:/var/lib/workspace-mcp:ro'), 'replicas mount it read-only')
  t.equal(mcp.environment.WORKSPACE_MCP_CODE_INDEX, 'shared', 'replicas never build it')
  t.same(mcp.depends_on.indexer, { condition: 'service_completed_successfully' }, 'replicas start once it is published')
  t.ok('index' in compose.volumes, 'a named volume, not the 16 MB /tmp')
  for (const service of [mcp, indexer]) t.notOk(service.tmpfs.some((mount: string) => mount.startsWith('/var/lib/workspace-mcp')), 'the index is not on a tmpfs')
  // The formula (README Deploy) for the reference tree, Linux 6.1: 848 MB of source, two parser threads.
  const formula = 310 + 0.2 * 848 + 100
  t.ok(mib(indexer.deploy.resources.limits.memory) >= formula, `compose: the indexer's limit holds the reference tree (${Math.round(formula)} MiB)`)
  t.equal(indexer.environment.WORKSPACE_MCP_INDEX_THREADS, '2')

  const [deployment] = yamlDocs('docker/k8s/deployment.yaml')
  const [cronjob] = yamlDocs('docker/k8s/index-cronjob.yaml')
  const [indexPvc] = yamlDocs('docker/k8s/index-pvc.yaml')
  const [kustomization] = yamlDocs('docker/k8s/kustomization.yaml')
  const job = cronjob.spec.jobTemplate.spec.template.spec
  const [builder] = job.containers
  t.equal(cronjob.spec.concurrencyPolicy, 'Forbid', 'k8s: one build at a time')
  t.same(builder.command, ['node', 'dist/bin/cli.js', 'index'])
  t.ok(mib(builder.resources.limits.memory) >= formula, 'k8s: the job\'s limit holds the reference tree')
  t.equal(job.volumes.find((v: { name: string }) => v.name === 'index').persistentVolumeClaim.claimName, indexPvc.metadata.name)
  t.ok(Number(/^(\d+)Gi$/.exec(indexPvc.spec.resources.requests.storage)?.[1]) * 1024 >= 2 * 1.8 * 848, 'the index volume holds two generations of the reference tree\'s index')
  const [replica] = deployment.spec.template.spec.containers
  const env = Object.fromEntries(replica.env.map((e: { name: string, value?: string }) => [e.name, e.value]))
  t.equal(env.WORKSPACE_MCP_CODE_INDEX, 'shared')
  t.match(replica.volumeMounts.find((m: { name: string }) => m.name === 'index'), { mountPath: '/var/lib/workspace-mcp', readOnly: true })
  t.ok(deployment.spec.template.spec.terminationGracePeriodSeconds * 1000 >= Number(env.WORKSPACE_MCP_DRAIN_MS) + 5000, 'the grace period covers the drain and the answers after it')
  // No pod starts on an image it cannot pull, or on a stranger's: the image is named through kustomize only.
  for (const container of [replica, builder]) t.equal(container.image, 'workspace-mcp', 'the name kustomize maps')
  t.same(kustomization.images, [{ name: 'workspace-mcp', newName: 'registry.invalid/set-your-registry/workspace-mcp', newTag: JSON.parse(read('package.json')).version }])
  t.same([...kustomization.resources].sort(), ['deployment.yaml', 'hpa.yaml', 'index-cronjob.yaml', 'index-pvc.yaml', 'service.yaml', 'workspace-pvc.yaml'], 'every manifest, once')
})

t.test('kubernetes: auth from a Secret, probes, limits, non-root, read-only, the workspace volume, an autoscaler', async t => {
  const [deployment] = yamlDocs('docker/k8s/deployment.yaml')
  const [service] = yamlDocs('docker/k8s/service.yaml')
  const [hpa] = yamlDocs('docker/k8s/hpa.yaml')
  const [pvc] = yamlDocs('docker/k8s/workspace-pvc.yaml')
  t.equal(deployment.kind, 'Deployment')
  const pod = deployment.spec.template.spec
  t.equal(pod.securityContext.runAsNonRoot, true, 'runAsNonRoot')
  const [container] = pod.containers
  t.equal(container.securityContext.readOnlyRootFilesystem, true, 'readOnlyRootFilesystem')
  t.equal(container.securityContext.allowPrivilegeEscalation, false, 'no privilege escalation')
  t.ok(container.resources.limits.cpu && container.resources.limits.memory, 'resource limits')
  t.equal(container.livenessProbe.httpGet.path, '/healthz', 'liveness on /healthz')
  t.equal(container.readinessProbe.httpGet.path, '/readyz', 'readiness on /readyz (503 while draining)')
  const env = Object.fromEntries(container.env.map((e: { name: string, value?: string, valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]))
  t.equal(env.WORKSPACE_MCP_MODE, 'stateless')
  t.same(env.WORKSPACE_MCP_AUTH_TOKENS, { secretKeyRef: { name: 'workspace-mcp-auth', key: 'tokens' } }, 'tokens from a Secret')
  t.match(env.WORKSPACE_MCP_ALLOWED_HOSTS, /\$\(POD_NAMESPACE\)/, 'allowed hosts follow the namespace it runs in')
  t.notMatch(read('docker/k8s/deployment.yaml'), /\.default\.svc/, 'no namespace written in')
  t.match(container.volumeMounts.find((m: { name: string }) => m.name === 'workspace'), { mountPath: '/workspace', readOnly: true })
  t.equal(pod.volumes.find((v: { name: string }) => v.name === 'workspace').persistentVolumeClaim.claimName, pvc.metadata.name)
  t.equal(service.kind, 'Service')
  t.same(service.spec.selector, deployment.spec.selector.matchLabels, 'Service selects the Deployment pods')
  t.equal(hpa.spec.scaleTargetRef.name, deployment.metadata.name, 'the autoscaler scales this Deployment')
})

const nginx = ['/usr/sbin/nginx', '/usr/bin/nginx'].find(p => existsSync(p))
t.test('docker/nginx.conf passes nginx -t', { skip: nginx === undefined ? 'nginx is not installed (apt-get install nginx)' : false }, async t => {
  const dir = mkdtempSync(join(tmpdir(), 'wmcp-nginx-t-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // `mcp` only resolves inside compose's network and /dev/stdout may be a socket here; the rest as written.
  const conf = read('docker/nginx.conf')
    .replace(/^(\s*)server mcp:3000;$/m, '$1server 127.0.0.1:3000;')
    .replace('access_log /dev/stdout', `access_log ${join(dir, 'access.log')}`)
  writeFileSync(join(dir, 'nginx.conf'), conf)
  const r = spawnSync(nginx!, ['-t', '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', `pid ${join(dir, 'nginx.pid')};`], { encoding: 'utf8', timeout: 10000 })
  t.equal(r.status, 0, `nginx -t: ${r.stderr}`)
})

t.test('the project checks its own image: docker/check.sh, run by .ci/run, documented in the README', async t => {
  const check = read('docker/check.sh')
  t.match(check, /--read-only/, 'runs the image with a read-only root filesystem')
  t.match(check, /:\/workspace:ro/, 'mounts the workspace read-only')
  t.match(check, /WORKSPACE_MCP_AUTH_TOKENS=/, 'runs it with auth on')
  t.match(check, /\/healthz/, 'probes /healthz')
  t.match(check, /status !== 401/, 'expects 401 without a token')
  t.match(check, /Bearer /, 'makes an authenticated MCP call')
  t.match(check, /stop -t \d+/, 'stops it gracefully and checks the exit code')
  t.match(check, /parse\(readFileSync\("docker\/compose\.yaml"/, 'the shipped layout with the limits read from docker/compose.yaml itself')
  t.match(check, /--memory "\$idx_mem"/, 'the indexer runs within its shipped memory limit')
  t.match(check, /WORKSPACE_MCP_CODE_INDEX=shared/, 'a replica reads the index the indexer built')
  t.match(check, /-ge 5000/, 'over a tree of at least 5,000 source files')
  t.match(check, /"find_symbol"/, 'calls find_symbol through the port')
  t.match(check, /"search_code"/, 'and search_code')
  t.match(read('.ci/run'), /^if bash docker\/check\.sh; then/m, '.ci/run runs it and counts its result')
  const readme = read('README.md')
  t.match(readme, /bash docker\/check\.sh/, 'the README documents it')
  t.notMatch(readme, /\.\.\/shared\//, 'the README names no file outside the repository')
})
