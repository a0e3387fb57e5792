// `npm run bench -- --only semantic`: search_semantic over four folders of the Linux 6.1 tree (bench/corpus.sh)
// with the deterministic fake provider the tests use (768 dimensions, on 127.0.0.1 in this process), through
// the built bin over stdio as a client sees it: the whole embedding (wall time, chunks per second, peak RSS),
// search_semantic latencies, a restart (vectors loaded back, nothing embedded), and a restart after touching
// 100 files (their chunks are written again with the same texts: still nothing embedded).
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpuSeconds } from './measure.js'
import { untilEmbedded } from './embedded-wait.js'
import { stdioServer } from './stdio-client.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const TREE = path.join(here, '..', '.corpus', 'linux-source-6.1')
const BIN = path.join(here, '..', '..', 'dist', 'bin', 'cli.js')
// BENCH_SEMANTIC_TREE=full: the whole tree at 384 dimensions (past the default cap of 250,000 chunks).
const FULL = process.env.BENCH_SEMANTIC_TREE === 'full'
const FOLDERS = FULL ? ['.'] : ['kernel', 'mm', 'fs', 'net']
const DIMS = FULL ? 384 : 768
const LIMIT_MS = 20 * 60_000
const QUERIES = ['allocate page memory', 'retry failed request', 'parse option string', 'tcp congestion window', 'free irq handler', 'copy from user buffer', 'wake up waiting task', 'checksum packet header']

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]
const peakRssMb = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024
const inputs = (fake) => fake.requests.reduce((n, r) => n + r.inputs.length, 0)

/** Starts the bin over the folders and waits until every chunk has a vector; returns the server, wall ms, CPU s and counts. */
async function untilReady (state, fake, log) {
  const [first, ...rest] = FOLDERS
  const server = stdioServer(BIN, FULL ? TREE : `${first}=${path.join(TREE, first)}`, [
    ...rest.flatMap(f => ['--root', `${f}=${path.join(TREE, f)}`]),
    '--state-dir', state, '--tool-timeout-ms', '600000', '--embeddings-url', `${fake.url}/v1`, '--embeddings-model', 'fake', '--embeddings-dimensions', String(DIMS)
  ])
  await server.initialize()
  const { info, ms } = await untilEmbedded(server, { limitMs: LIMIT_MS, log, label: 'semantic', whole: !FULL })
  const { code_index: index, embeddings } = info
  return { server, ms, cpu: cpuSeconds(server.child.pid), chunks: index.chunks, files: index.files, vectors: embeddings.vectors }
}

/** Runs the section; returns report rows. */
export async function runSemanticBench (log) {
  if (!existsSync(path.join(TREE, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const { startFakeEmbeddings } = await import('./fake-embeddings.js')
  const fake = await startFakeEmbeddings({ dims: DIMS })
  const state = mkdtempSync(path.join(tmpdir(), 'wmcp-semantic-bench-'))
  try {
    log(`semantic: index and embed ${FULL ? 'the whole' : `${FOLDERS.join(', ')} of the`} Linux 6.1 tree (fake provider, ${DIMS} dimensions)`)
    const full = await untilReady(state, fake, log)
    const rss = peakRssMb(full.server.child.pid)
    const embedded = inputs(fake)
    const times = []
    for (const query of QUERIES) {
      for (let i = 0; i < 5; i++) {
        const started = performance.now()
        const answer = await full.server.call('tools/call', { name: 'search_semantic', arguments: { query } })
        if (answer.result.isError) throw new Error(answer.result.content[0].text)
        times.push(performance.now() - started)
      }
    }
    full.server.child.kill()

    log('semantic: restart (vectors loaded back)')
    const before = inputs(fake)
    const restart = await untilReady(state, fake, log)
    // Counted before the query below, whose own embedding is not a chunk's.
    const afterRestart = inputs(fake) - before
    const first = performance.now()
    await restart.server.call('tools/call', { name: 'search_semantic', arguments: { query: 'allocate page memory' } })
    const firstQueryMs = performance.now() - first
    restart.server.child.kill()

    log('semantic: restart after touching 100 files')
    const touched = execFileSync('find', [path.join(TREE, 'kernel'), '-name', '*.c'], { encoding: 'utf8' }).trim().split('\n').slice(0, 100)
    const now = new Date()
    for (const file of touched) utimesSync(file, now, now)
    const beforeTouch = inputs(fake)
    const touchedRun = await untilReady(state, fake, log)
    touchedRun.server.child.kill()
    const afterTouch = inputs(fake) - beforeTouch

    return [
      { name: `search_semantic, index + embed ${FULL ? 'the whole tree' : FOLDERS.join('/')} (${full.files} files, ${full.chunks} chunks; fake provider in-process, ${DIMS} dims)`, measured: `${(full.ms / 1000).toFixed(0)} s wall (${Math.round(embedded / (full.ms / 1000))} chunks/s), ${full.cpu.toFixed(0)} s server CPU, peak RSS ${rss.toFixed(0)} MB; ${embedded} texts embedded`, baseline: '—', ratio: '—', goal: 'info', pass: '—' },
      { name: `search_semantic, ${QUERIES.length} queries × 5 (query embedding + exact cosine over ${full.vectors} vectors + BM25 over ${full.chunks} chunks + fusion)`, measured: `p50 ${percentile(times, 0.5).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms`, baseline: '—', ratio: '—', goal: 'info', pass: '—' },
      { name: 'search_semantic, restart: vectors loaded back', measured: `ready in ${(restart.ms / 1000).toFixed(1)} s, first query ${firstQueryMs.toFixed(0)} ms; ${afterRestart} texts embedded`, baseline: '—', ratio: '—', goal: 'nothing embedded again', pass: afterRestart === 0 },
      { name: 'search_semantic, restart after touching 100 files', measured: `ready in ${(touchedRun.ms / 1000).toFixed(1)} s; ${afterTouch} texts embedded`, baseline: '—', ratio: '—', goal: 'nothing embedded again (same texts)', pass: afterTouch === 0 }
    ]
  } finally {
    await fake.close()
    rmSync(state, { recursive: true, force: true })
  }
}
