import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import v8 from 'node:v8'
import vm from 'node:vm'
import { makePdf } from './helpers/documents.js'
import { waitUntil } from './helpers/wait.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/base/config.js'
import { createRuntime } from '../src/runtime.js'

// A server started and closed again and again in one process leaves nothing behind: every thread (code index,
// its parsers, vectors, token counting, outlines, PDFs), index file, watcher, socket and child process it opened
// for its calls is gone once app.close() returns.

// Twenty: a leak of one handle per run shows after the second; the repeats catch one that only some runs leave
// (every fifth run makes every call). Each run builds an index on its threads (~0.4 s of CPU): fifty took 23 s.
const RUNS = 20

/** A full collection, twice, a turn apart: SQLite statements are finalized by the collector (see index-reader). */
async function collect (): Promise<void> {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc') as () => void
  for (let i = 0; i < 2; i++) {
    gc()
    // The finalizers it queued run as tasks of later turns: the caller looks again until they have (settled()).
    await new Promise(resolve => setImmediate(resolve))
  }
}

/**
 * What the process holds now: open file descriptors, threads, and libuv's active resources by kind. Threads of
 * the native canvas binding pdfjs-dist loads (@napi-rs/canvas: a tokio pool, one per process, sized by the
 * cores) are the library's, not a server's.
 */
async function holdings (): Promise<{ fds: string[], threads: number, resources: Record<string, number> }> {
  await collect()
  const resources: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1
  // A module file open for a moment is the loader reading it (tap loads its helpers lazily), not a holding.
  const fds = fs.readdirSync('/proc/self/fd').map(fd => { try { return fs.readlinkSync(`/proc/self/fd/${fd}`) } catch { return 'gone' } })
    .filter(fd => fd !== 'gone' && !/\/node_modules\/.*\.(js|mjs|cjs|json)$/.test(fd)).sort()
  const threads = fs.readdirSync('/proc/self/task').filter(id => { try { return fs.readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim() !== 'tokio-rt-worker' } catch { return false } }).length
  return { fds, threads, resources }
}

/** Calls that start every thread and process a server has: tokens, outline, index (and its lanes), search, PDF. */
const ALL_CALLS = [
  { name: 'read_files', arguments: { files: [{ path: 'src/app.ts' }] } },
  { name: 'get_symbols', arguments: { paths: ['src/app.ts'] } },
  { name: 'find_symbol', arguments: { name: 'start' } },
  { name: 'search_regex', arguments: { pattern: 'start' } },
  { name: 'read_files', arguments: { files: [{ path: 'doc.pdf' }] } }
]

/** Starts a server (its code index building), makes `calls`, closes it; each call's outcome. */
async function serveOnce (root: string, stateDir: string, calls: typeof ALL_CALLS): Promise<string[]> {
  const config = loadConfig({ root, stateDir, host: '127.0.0.1', port: 0, mode: 'stateless' }, {})
  const runtime = await createRuntime(config, pino({ level: 'silent' }))
  const app = await buildApp({ runtime, config })
  await app.listen({ host: '127.0.0.1', port: 0 })
  runtime.warmUp()
  const outcomes: string[] = []
  try {
    for (const [i, params] of calls.entries()) {
      const reply = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        payload: { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params }
      })
      const body = JSON.parse(reply.body) as { result?: { isError?: boolean }, error?: { message: string } }
      // A refusal (a 503 while a loaded machine's event loop lags) is named, so a failure says which.
      outcomes.push(`${params.name}:${body.result?.isError === true ? 'error' : body.result === undefined ? `${reply.statusCode} ${body.error?.message}` : 'ok'}`)
    }
  } finally {
    await app.close()
  }
  return outcomes
}

t.test(`a server started and closed ${RUNS} times in one process leaves no thread, handle or descriptor`, { timeout: 240_000 }, async (t) => {
  const root = fs.realpathSync(t.testdir({
    src: { 'app.ts': 'export function start () {\n  return 1\n}\n', 'util.py': 'def start():\n    pass\n' },
    'doc.pdf': makePdf(['start here'])
  }))
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-lifecycle-'))
  t.teardown(() => fs.rmSync(stateDir, { recursive: true, force: true }))

  // One run first: what stays for the process's life (libuv's thread pool, loaded modules) is not a leak.
  t.same(await serveOnce(root, stateDir, ALL_CALLS), ALL_CALLS.map(c => `${c.name}:ok`), 'every call answered, every thread used')
  // Taken once two looks in a row agree: the first run's own handles close a few turns after it.
  let before = await holdings()
  await waitUntil(async () => { const next = await holdings(); const settled = JSON.stringify(next) === JSON.stringify(before); before = next; return settled }, 'the holdings to settle after the first run', 30_000, 50)
  // Every run starts the code index's thread; every fifth also every other thread and process there is.
  for (let i = 1; i < RUNS; i++) await serveOnce(root, stateDir, i % 5 === 0 ? ALL_CALLS : [])
  // Finalizers and closing handles end a few turns after the last close: what the process holds is looked at until
  // it matches (a minute at most), then compared — a leak fails at the bound, the assertions naming what stayed.
  let after = before
  await waitUntil(async () => { after = await holdings(); return JSON.stringify(after) === JSON.stringify(before) }, 'the holdings to return to those before the runs', 60_000, 50).catch(() => {})

  t.same(after.fds, before.fds, `open descriptors: ${before.fds.length} before, ${after.fds.length} after ${RUNS - 1} more runs`)
  t.equal(after.threads, before.threads, `threads: ${before.threads} before, ${after.threads} after`)
  t.same(after.resources, before.resources, 'the same active handles and requests, kind by kind')
})
