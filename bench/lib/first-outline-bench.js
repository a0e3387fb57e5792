// `npm run bench -- --only first-outline` (also in `--index`): the first get_symbols of a fresh server on a
// 5,312-line C file (Linux 6.1's fs/namei.c), as the client waits — with the threads warmed once the first
// request is answered (the default), and with --lazy-threads (each started by the first call that needs it) —
// beside the same call once the server is warm. Each figure is the median over fresh servers, run alternately.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { stdioServer } from './stdio-client.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const BIN = path.join(here, '..', '..', 'dist', 'bin', 'cli.js')
const FILE = path.join(here, '..', '.corpus', 'linux-source-6.1', 'fs', 'namei.c')
/** Fresh servers per mode. */
const SERVERS = 7
/** How long after initialize the client asks: a client lists tools and reads a file or two before it outlines. */
const ASK_AFTER_MS = 3000

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function outlineOnce (root, extra) {
  const server = stdioServer(BIN, root, ['--code-index', 'off', ...extra])
  try {
    await server.initialize()
    await new Promise(resolve => setTimeout(resolve, ASK_AFTER_MS))
    const times = []
    for (let call = 0; call < 4; call++) {
      const started = performance.now()
      const answer = await server.call('tools/call', { name: 'get_symbols', arguments: { paths: ['namei.c'] } })
      if (answer.result.isError) throw new Error(`get_symbols: ${answer.result.content[0].text}`)
      times.push(performance.now() - started)
    }
    return { first: times[0], warm: median(times.slice(1)) }
  } finally {
    const exited = new Promise(resolve => server.child.once('exit', resolve))
    server.child.stdin.end()
    await exited
  }
}

/** Runs the section; returns its report rows. */
export async function runFirstOutlineBench (log) {
  if (!existsSync(FILE)) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const root = mkdtempSync(path.join(tmpdir(), 'wmcp-first-outline-'))
  try {
    copyFileSync(FILE, path.join(root, 'namei.c'))
    const runs = { warmed: [], lazy: [] }
    for (let i = 0; i < SERVERS; i++) {
      runs.warmed.push(await outlineOnce(root, []))
      runs.lazy.push(await outlineOnce(root, ['--lazy-threads']))
      log(`first-outline: server ${i + 1} of ${SERVERS}: ${runs.warmed.at(-1).first.toFixed(0)} ms warmed, ${runs.lazy.at(-1).first.toFixed(0)} ms lazy`)
    }
    const first = median(runs.warmed.map(r => r.first))
    const lazy = median(runs.lazy.map(r => r.first))
    const warm = median([...runs.warmed, ...runs.lazy].map(r => r.warm))
    return [
      { name: `get_symbols fs/namei.c (5,312 lines of C), the first call of a fresh stdio server ${ASK_AFTER_MS / 1000} s after initialize, median of ${SERVERS} servers`, measured: `${first.toFixed(0)} ms (threads warmed once the first request was answered)`, baseline: `--lazy-threads: ${lazy.toFixed(0)} ms; the same call once warm: ${warm.toFixed(0)} ms`, ratio: first / warm, goal: '≤ 100 ms', pass: first <= 100 }
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
