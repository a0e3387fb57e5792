// `npm run bench -- --only code-latency` with BENCH_BEFORE_BIN=<another build's dist/bin/cli.js>: the whole Linux 6.1
// tree (bench/corpus.sh) indexed by that build and by this one, each into an empty state folder of its own, one after
// the other — build wall time, CPU seconds, peak RSS and index size side by side — then search_code's latency as a
// client waits, the index bench's eight queries asked of both servers in alternating rounds (the order swapped each
// round), so that both are measured under the same load of a shared machine. A ranking change is held to this: its
// p95 within 1.5 × the build before it. BENCH_LATENCY_TREE=<folder> measures over another tree (a part of Linux's, when
// two whole-tree builds do not fit the time a shared machine leaves).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpuSeconds } from './measure.js'
import { stdioServer } from './stdio-client.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const LINUX = path.join(here, '..', '.corpus', 'linux-source-6.1')
const OWN_BIN = path.join(here, '..', '..', 'dist', 'bin', 'cli.js')
/** The index bench's queries (index-bench.js): words an agent asks with, over the whole tree. */
const QUERIES = ['allocate page memory', 'retry failed request', 'parse option string', 'tcp congestion window', 'free irq handler', 'copy from user buffer', 'wake up waiting task', 'checksum packet header']
const ROUNDS = 10
const BUILD_LIMIT_MS = 40 * 60_000

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

/** Starts `bin` over the tree with `state` (empty: a full build) and waits for its scan: the server and what it cost. */
async function built (bin, tree, state, log, label) {
  const server = stdioServer(bin, tree, ['--state-dir', state, '--tool-timeout-ms', '600000'])
  const started = performance.now()
  await server.initialize()
  for (let told = 0; ;) {
    const status = (await server.call('tools/call', { name: 'get_workspace_info', arguments: {} })).result.structuredContent.code_index
    const ms = performance.now() - started
    if (status.state === 'ready') {
      const rssMb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))[1]) / 1024
      const indexMb = readdirSync(state).reduce((sum, name) => sum + statSync(path.join(state, name)).size, 0) / 1048576
      return { server, ms, cpu: cpuSeconds(server.child.pid), rssMb, indexMb, status }
    }
    if (status.state === 'failed' || ms > BUILD_LIMIT_MS) throw new Error(`${label}: the index did not build: ${JSON.stringify(status)}`)
    if (ms - told > 30_000) {
      told = ms
      log(`  ${label}: ${status.done} of ${status.pending} files (${Math.round(ms / 1000)} s)`)
    }
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

async function timed (server, query) {
  const started = performance.now()
  const answer = await server.call('tools/call', { name: 'search_code', arguments: { query } })
  if (answer.error !== undefined || answer.result.isError) throw new Error(`search_code "${query}" failed`)
  return performance.now() - started
}

/** Runs the section; returns report rows. */
export async function runCodeLatencyBench (log, { before = process.env.BENCH_BEFORE_BIN, label = process.env.BENCH_BEFORE_LABEL ?? 'before', tree = process.env.BENCH_LATENCY_TREE } = {}) {
  if (before === undefined) throw new Error('BENCH_BEFORE_BIN=<another build\'s dist/bin/cli.js> names the build to compare with')
  if (tree === undefined && !existsSync(path.join(LINUX, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  if (tree !== undefined && !existsSync(tree)) throw new Error(`BENCH_LATENCY_TREE=${tree} is missing`)
  const root = tree === undefined ? LINUX : path.resolve(tree)
  const what = tree === undefined ? 'the whole Linux 6.1 tree' : root
  const builds = [{ name: label, bin: path.resolve(before) }, { name: 'this build', bin: OWN_BIN }].map(b => ({ ...b, state: mkdtempSync(path.join(tmpdir(), 'wmcp-code-latency-')), times: [] }))
  const running = []
  const stop = async (server) => {
    server.child.kill()
    await new Promise(resolve => server.child.once('exit', resolve))
  }
  try {
    // One build at a time, nothing else of ours running; then both servers again over their indexes (a rescan).
    for (const b of builds) {
      log(`code-latency: ${b.name}: ${what} into an empty state folder`)
      const { server, ...cost } = await built(b.bin, root, b.state, log, b.name)
      Object.assign(b, cost)
      await stop(server)
    }
    for (const b of builds) {
      b.server = (await built(b.bin, root, b.state, log, b.name)).server
      running.push(b.server)
      // One warm-up pass, not counted: the first query of each server pays its statements and page cache.
      for (const query of QUERIES) await timed(b.server, query)
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const b of round % 2 === 0 ? builds : [...builds].reverse()) {
        for (const query of QUERIES) b.times.push(await timed(b.server, query))
      }
    }
  } finally {
    for (const server of running) await stop(server)
    for (const b of builds) rmSync(b.state, { recursive: true, force: true })
  }
  const [was, now] = builds
  const p95 = (b) => percentile(b.times, 0.95)
  const figures = (b) => `p50 ${percentile(b.times, 0.5).toFixed(1)} ms, p95 ${p95(b).toFixed(1)} ms`
  const cost = (b) => `${(b.ms / 1000).toFixed(0)} s wall, ${b.cpu.toFixed(0)} s CPU, peak RSS ${b.rssMb.toFixed(0)} MB, index ${b.indexMb.toFixed(0)} MB (${b.status.files} files, ${b.status.chunks} chunks)`
  return [
    { name: `search_code over ${what}, ${QUERIES.length} queries × ${ROUNDS} alternating rounds: this build against ${was.name}`, measured: figures(now), baseline: `${was.name}: ${figures(was)}`, ratio: Number((p95(now) / p95(was)).toFixed(2)), goal: 'p95 ≤ 1.5 × before', pass: p95(now) <= 1.5 * p95(was) },
    { name: `code index of ${what}, built by this build against ${was.name}`, measured: cost(now), baseline: `${was.name}: ${cost(was)}`, ratio: Number((now.ms / was.ms).toFixed(2)), goal: 'info (wall time ratio)', pass: '—', note: `index size ×${(now.indexMb / was.indexMb).toFixed(2)}, CPU ×${(now.cpu / was.cpu).toFixed(2)}` }
  ]
}
