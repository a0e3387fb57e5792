// `npm run bench -- --only sizing` and `--only build-latency`: what the code index costs, and what it costs the
// calls that run while it builds. Both drive the built bin as users run it, over real trees (bench/corpus.sh).
//
// sizing: `workspace-mcp index` over four trees of different sizes (this repository, and Linux 6.1's fs/,
// drivers/net and whole tree), with 1 and 2 parser threads: source bytes, index bytes, peak RSS (/proc VmHWM of
// the process, threads included), wall time — and the README's formula checked against each.
//
// build-floor: the whole Linux tree indexed by `workspace-mcp index`, against reading and parsing the same files with
// the same grammars and queries on as many threads (parse-floor.js), in the same run; and, in the note, against the
// definitions query alone.
//
// build-latency: search_regex and read_files over stdio while the first index of the Linux tree is being built,
// against the same calls once it is done (the index threads run below ripgrep's priority).
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { stdioServer } from './stdio-client.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const LINUX = path.join(here, '..', '.corpus', 'linux-source-6.1')
const REPO = path.join(here, '..', '..')
const BIN = path.join(REPO, 'dist', 'bin', 'cli.js')

/** The README's sizing formula (Deploy): index bytes and peak RSS from source MB and parser threads. */
export function predicted (sourceMb, threads) {
  return { indexMb: sourceMb * 1.8, rssMb: 310 + 0.2 * sourceMb + 100 * (threads - 1) }
}

/** Runs `index` once; resolves with its counts, wall time, peak RSS, the index's size and (with `keep`) the files it indexed. */
async function indexOnce (root, threads, keep = false) {
  const state = mkdtempSync(path.join(tmpdir(), 'wmcp-sizing-'))
  try {
    const child = spawn(process.execPath, [BIN, 'index', '--root', root, '--state-dir', state, '--index-threads', String(threads), '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let peak = 0
    child.stdout.on('data', chunk => { out += chunk })
    // VmHWM is the process's own high-water mark; read until it exits (the last reading is the answer).
    const sample = setInterval(() => {
      try {
        peak = Math.max(peak, Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024)
      } catch {}
    }, 100)
    const started = performance.now()
    const code = await new Promise(resolve => child.once('exit', resolve))
    clearInterval(sample)
    const ms = performance.now() - started
    if (code !== 0) throw new Error(`index exited ${code}: ${out}`)
    const m = /: (\d+) source files, (\d+) chunks, (\d+) symbols \(([\d.]+) MB of source/.exec(out)
    const indexMb = readdirSync(state).reduce((sum, name) => sum + statSync(path.join(state, name)).size, 0) / 1048576
    return { files: Number(m[1]), sourceMb: Number(m[4]), indexMb, rssMb: peak, ms, ...(keep ? { indexed: await indexedFiles(state) } : {}) }
  } finally {
    rmSync(state, { recursive: true, force: true })
  }
}

/** The real paths of the files an index in `state` holds (those parsed: a language of their own). */
async function indexedFiles (state) {
  const { DatabaseSync } = await import('@photostructure/sqlite')
  const db = new DatabaseSync(path.join(state, readdirSync(state).find(n => n.endsWith('.sqlite'))), { readOnly: true })
  try {
    return db.prepare("SELECT path FROM files WHERE language != '-' ORDER BY id").all().map(r => r.path)
  } finally {
    db.close()
  }
}

/** The build-floor section: the whole Linux tree's index build against parsing its files alone, 2 threads each. */
export async function runBuildFloorBench (log) {
  if (!existsSync(path.join(LINUX, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const threads = 2
  log(`build-floor: index the whole Linux tree (${threads} parser threads)`)
  const build = await indexOnce(LINUX, threads, true)
  log(`build-floor: read and parse the same ${build.indexed.length} files alone`)
  const { parseFloor } = await import('./parse-floor.js')
  const floor = await parseFloor(build.indexed, threads)
  // Said beside it: the floor before the build parsed references (the 91 s was this one).
  log('build-floor: and with the definitions query alone')
  const definitionsOnly = await parseFloor(build.indexed, threads, { references: false })
  const bound = predicted(build.sourceMb, threads).rssMb
  return [{
    name: `index build of the whole Linux 6.1 tree (${build.files} files, ${build.sourceMb.toFixed(0)} MB), ${threads} parser threads`,
    measured: `${(build.ms / 1000).toFixed(0)} s, peak RSS ${build.rssMb.toFixed(0)} MiB`,
    baseline: `read + parse (definitions and references) alone: ${(floor.ms / 1000).toFixed(0)} s (${(floor.bytes / 1048576 / (floor.ms / 1000)).toFixed(1)} MB/s)`,
    ratio: build.ms / floor.ms,
    goal: `≤ 1.5× the floor, RSS ≤ ${bound.toFixed(0)} MiB (docs/deploy.md)`,
    pass: build.ms <= 1.5 * floor.ms && build.rssMb <= bound,
    note: `the definitions query alone: ${(definitionsOnly.ms / 1000).toFixed(0)} s (${(build.ms / definitionsOnly.ms).toFixed(2)}×)`
  }]
}

/** The sizing section: four trees × 1 and 2 threads. */
export async function runSizingBench (log) {
  if (!existsSync(path.join(LINUX, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const trees = [['this repository', REPO], ['Linux fs/', path.join(LINUX, 'fs')], ['Linux drivers/net', path.join(LINUX, 'drivers', 'net')], ['Linux 6.1, whole tree', LINUX]]
  const rows = []
  const lines = ['| tree | files | source | index (× source) | threads | peak RSS | formula RSS | wall |', '|---|---|---|---|---|---|---|---|']
  for (const [name, root] of trees) {
    for (const threads of [1, 2]) {
      log(`sizing: ${name}, ${threads} parser thread(s)`)
      const r = await indexOnce(root, threads)
      const p = predicted(r.sourceMb, threads)
      lines.push(`| ${name} | ${r.files.toLocaleString('en-US')} | ${r.sourceMb.toFixed(1)} MB | ${r.indexMb.toFixed(1)} MB (${(r.indexMb / r.sourceMb).toFixed(2)}) | ${threads} | ${r.rssMb.toFixed(0)} MiB | ${p.rssMb.toFixed(0)} MiB | ${(r.ms / 1000).toFixed(1)} s |`)
      rows.push({
        name: `index sizing, ${name} (${r.files} files, ${r.sourceMb.toFixed(1)} MB of source), ${threads} parser thread(s)`,
        measured: `index ${r.indexMb.toFixed(1)} MB, peak RSS ${r.rssMb.toFixed(0)} MiB, ${(r.ms / 1000).toFixed(1)} s`,
        baseline: `formula: index ≤ ${p.indexMb.toFixed(0)} MB, RSS ≤ ${p.rssMb.toFixed(0)} MiB`,
        ratio: r.rssMb / p.rssMb,
        goal: 'within the formula',
        pass: r.indexMb <= p.indexMb && r.rssMb <= p.rssMb
      })
    }
  }
  return { rows, markdown: `## Index sizing\n\n${lines.join('\n')}` }
}

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]

/** Times `calls` one after another; p50 and p95 in ms. */
async function timed (server, calls) {
  const times = []
  for (const params of calls) {
    const started = performance.now()
    const answer = await server.call('tools/call', params)
    if (answer.result?.isError === true) throw new Error(`${params.name} failed: ${answer.result.content[0].text}`)
    times.push(performance.now() - started)
  }
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95) }
}

/** The build-latency section: the same calls during the first build of the Linux tree, then after it. */
export async function runBuildLatencyBench (log) {
  if (!existsSync(path.join(LINUX, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const state = mkdtempSync(path.join(tmpdir(), 'wmcp-build-latency-'))
  const server = stdioServer(BIN, LINUX, ['--state-dir', state])
  try {
    await server.initialize()
    // A pattern of its own for every call (an alternative that never matches): each one runs ripgrep, none is cached.
    const search = (phase) => Array.from({ length: 15 }, (_, i) => ({ name: 'search_regex', arguments: { pattern: `kmem_cache_alloc|wmcp_${phase}_${i}_never`, path: 'mm' } }))
    const read = Array.from({ length: 15 }, () => ({ name: 'read_files', arguments: { files: [{ path: 'kernel/fork.c' }] } }))
    const info = async () => (await server.call('tools/call', { name: 'get_workspace_info', arguments: {} })).result.structuredContent.code_index
    // The first call starts the build; the calls are timed once it is parsing files, each kind warmed up once
    // first (the first read_files starts the token counters: what that costs is not the build's doing).
    while ((await info()).done < 200) await new Promise(resolve => setTimeout(resolve, 200))
    await timed(server, [search('warm')[0], read[0]])
    log('build-latency: timing calls while the index builds')
    const during = { search: await timed(server, search('during')), read: await timed(server, read), progress: await info() }
    if (during.progress.state !== 'building') throw new Error('the build finished before the calls did: use a larger tree')
    log('build-latency: waiting for the build to finish')
    while ((await info()).state !== 'ready') await new Promise(resolve => setTimeout(resolve, 1000))
    const after = { search: await timed(server, search('after')), read: await timed(server, read) }
    const row = (what, d, a) => ({
      name: `${what} during the first index build of the Linux tree, against after it`,
      measured: `during: p50 ${d.p50.toFixed(1)} ms, p95 ${d.p95.toFixed(1)} ms`,
      baseline: `after: p50 ${a.p50.toFixed(1)} ms, p95 ${a.p95.toFixed(1)} ms`,
      ratio: d.p50 / a.p50,
      goal: '≤ 1.5× (p50)',
      pass: d.p50 <= 1.5 * a.p50
    })
    return [row('search_regex `kmem_cache_alloc` in mm/', during.search, after.search), row('read_files kernel/fork.c (86 KB, cut to the default 10,000-token budget)', during.read, after.read)]
  } finally {
    server.child.kill()
    await new Promise(resolve => server.child.once('exit', resolve))
    rmSync(state, { recursive: true, force: true })
  }
}
