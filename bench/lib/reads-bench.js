// Memory and fairness of read_files (issue 11, defect 7), against a built stdio bin.
//
// 1. Peak RSS growth (VmHWM from /proc) of one call, each in a fresh server after a warm-up read:
//    a ranged read of the line of a 100 MB one-line file; unranged reads of 9 MB files (long and short lines).
// 2. Latency of a 50 KB read, alone and while 8 clients each keep reading a 1 MB file (8 request loops
//    over the same stdio connection: the tokenizer schedules per call, so this is what 8 clients cost).
// Data is generated in a temp dir and removed afterwards. Linux only (reads /proc).
// `npm run bench -- --only reads [--bin OTHER/cli.js]` measures another build (an older commit, for "before").
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { stdioServer } from './stdio-client.js'

const MB = 1024 * 1024

// Source-like text so the BPE does real work (about 3.7 bytes per token).
const words = ['const', 'value', 'compute', 'alpha', 'beta', 'return', 'await', 'fetchUser', 'config', 'options', 'result', '=>', '(', ')', '{', '}', '+', '42', 'if', 'else', 'for', 'let', 'this.state', 'items.map']
let seed = 7
const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
const sourceLine = (bytes) => { let s = ''; while (s.length < bytes) s += words[rand(words.length)] + ' '; return s.slice(0, bytes) + '\n' }
const sourceText = (bytes, lineBytes) => { const out = []; let n = 0; while (n < bytes) { const l = sourceLine(lineBytes); out.push(l); n += l.length } return out.join('') }

/** Runs both measurements; returns table rows. */
export async function runReadsBench ({ bin, samples = 7, clients = 8 } = {}, log = () => {}) {
  const BIN = path.resolve(bin ?? fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url)))
  const SAMPLES = samples
  const CLIENTS = clients
  const root = mkdtempSync(path.join(tmpdir(), 'wmcp-bench-reads-'))
  log(`   writing ${100 + 18 + CLIENTS} MB of test files`)

  writeFileSync(path.join(root, 'one-line.txt'), Buffer.alloc(100 * MB, 'abcdefgh '))
  writeFileSync(path.join(root, 'nine.txt'), sourceText(9 * MB, 100))
  writeFileSync(path.join(root, 'nine-short.txt'), sourceText(9 * MB, 8))
  writeFileSync(path.join(root, 'warm.txt'), sourceText(40 * 1024, 100))
  writeFileSync(path.join(root, 'small.txt'), sourceText(50 * 1024, 100))
  for (let i = 0; i < CLIENTS; i++) writeFileSync(path.join(root, `big${i}.txt`), sourceText(MB, 500))

  function server () {
    const { child, call, initialize } = stdioServer(BIN, root)
    const read = async (file, budget = 10000) => {
      const started = performance.now()
      const msg = await call('tools/call', { name: 'read_files', arguments: { files: [file], max_response_tokens: budget } })
      const text = msg.result?.content?.[0]?.text ?? JSON.stringify(msg)
      return { ms: performance.now() - started, text, error: msg.result?.isError === true }
    }
    const peakMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024
    const start = async () => {
      await initialize()
      await read({ path: 'warm.txt' }, 1000) // loads the code paths and the tokenizer's ranks
    }
    const stop = () => { child.kill('SIGTERM') }
    return { read, peakMb, start, stop }
  }

  async function rssGrowth (file) {
    const s = server()
    await s.start()
    const before = s.peakMb()
    const r = await s.read(file)
    const after = s.peakMb()
    s.stop()
    if (r.error) throw new Error(r.text)
    return { growth: after - before, ms: r.ms }
  }

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

  async function fairness () {
    const s = server()
    await s.start()
    const alone = []
    for (let i = 0; i < SAMPLES; i++) alone.push((await s.read({ path: 'small.txt' })).ms)
    const state = { running: true }
    const big = []
    const loops = Array.from({ length: CLIENTS }, async (_, i) => {
      while (state.running) {
        const r = await s.read({ path: `big${i}.txt` })
        big.push(r.ms)
        if (r.error) big.timeouts = (big.timeouts ?? 0) + 1
      }
    })
    await new Promise(resolve => setTimeout(resolve, 500))
    const loaded = []
    for (let i = 0; i < SAMPLES; i++) {
      const r = await s.read({ path: 'small.txt' })
      loaded.push(r.ms)
    }
    state.running = false
    await Promise.all(loops)
    s.stop()
    return { alone, loaded, big }
  }

  const fmt = (ms) => ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`
  try {
    log(`   peak RSS per read (${BIN})`)
    const ranged = await rssGrowth({ path: 'one-line.txt', start_line: 1, end_line: 1 })
    const whole = await rssGrowth({ path: 'nine.txt' })
    const short = await rssGrowth({ path: 'nine-short.txt' })
    log(`   a 50 KB read beside ${CLIENTS} clients reading 1 MB files`)
    const f = await fairness()
    const rss = (r) => `+${r.growth.toFixed(1)} MB peak RSS (${fmt(r.ms)})`
    return [
      { name: 'read_files, ranged read of the line of a 100 MB one-line file', measured: rss(ranged), baseline: '—', goal: '≤ 16 MB', pass: ranged.growth <= 16, note: 'growth of the server\'s peak RSS over one call' },
      { name: 'read_files, unranged read of a 9 MB file (100-byte lines)', measured: rss(whole), baseline: '—', goal: '≤ 32 MB', pass: whole.growth <= 32 },
      { name: 'read_files, unranged read of a 9 MB file (9-byte lines)', measured: rss(short), baseline: '—', goal: '≤ 32 MB', pass: short.growth <= 32 },
      {
        name: `read_files, 50 KB read while ${CLIENTS} clients read 1 MB files`,
        measured: `median ${fmt(median(f.loaded))}, max ${fmt(Math.max(...f.loaded))}`,
        baseline: `alone: median ${fmt(median(f.alone))}`,
        ratio: median(f.loaded) / median(f.alone),
        goal: 'info',
        note: `${SAMPLES} samples each; the 1 MB reads meanwhile: median ${fmt(median(f.big))}, ${f.big.length} done, ${f.big.timeouts ?? 0} failed`
      }
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
