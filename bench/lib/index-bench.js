// `npm run bench -- --index`: the code index over the Linux 6.1 tree (bench/corpus.sh), through the built
// bin over stdio as a client sees it. A full build into an empty state folder (wall time, the process's CPU
// time and peak RSS, all threads included), a restart over the unchanged tree, a restart after touching 100
// files, then find_symbol, search_code and get_symbols latencies (p50/p95 of each call as the client waits).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpuSeconds } from './measure.js'
import { stdioServer } from './stdio-client.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const TREE = path.join(here, '..', '.corpus', 'linux-source-6.1')
const BIN = path.join(here, '..', '..', 'dist', 'bin', 'cli.js')
/** Longest a build may take before the section gives up (the goal is 5 min). */
const BUILD_LIMIT_MS = 20 * 60_000

const NAMES = ['kmalloc', 'kfree', 'schedule', 'printk', 'mutex_lock', 'copy_process', 'task_struct', 'list_add', 'spin_lock', 'vfs_read']
const QUERIES = ['allocate page memory', 'retry failed request', 'parse option string', 'tcp congestion window', 'free irq handler', 'copy from user buffer', 'wake up waiting task', 'checksum packet header']

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}
const peakRssMb = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

/** Starts the bin over the tree and waits for the index's scan; returns the server, its wall time and CPU seconds until ready. */
async function untilIndexed (state, log, extra = []) {
  const server = stdioServer(BIN, TREE, ['--state-dir', state, '--tool-timeout-ms', '600000', ...extra])
  const started = performance.now()
  await server.initialize()
  for (;;) {
    const info = await server.call('tools/call', { name: 'get_workspace_info', arguments: {} })
    const status = info.result.structuredContent.code_index
    // The scan's own duration is in the text: "last scan <time> (2.4 s)".
    const scanMs = Number(/last scan \S+ \(([\d.]+) s\)/.exec(info.result.content[0].text)?.[1]) * 1000
    // A restart is ready at once with the index it had; the figure is the rescan behind it, so that is waited for.
    if (status.state === 'ready' && Number.isFinite(scanMs)) return { server, ms: performance.now() - started, scanMs, cpu: cpuSeconds(server.child.pid), status }
    if (status.state === 'failed') throw new Error(`the index failed: ${JSON.stringify(status)}`)
    if (performance.now() - started > BUILD_LIMIT_MS) throw new Error('the index took longer than 20 minutes')
    // Asked every 50 ms, so the time to ready is measured to a twentieth of a second; told every 5 s.
    const elapsed = performance.now() - started
    if (Math.floor(elapsed / 5000) > Math.floor((elapsed - 50) / 5000)) log(`  index: ${status.done} of ${status.pending} files (${Math.round(elapsed / 1000)} s)`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function latencies (server, calls) {
  const times = []
  let first
  for (const params of calls) {
    const started = performance.now()
    const answer = await server.call('tools/call', params)
    times.push(performance.now() - started)
    first ??= answer.result
  }
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), first }
}

/** Runs the section; returns report rows. */
export async function runIndexBench (log) {
  if (!existsSync(path.join(TREE, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const state = mkdtempSync(path.join(tmpdir(), 'wmcp-index-bench-'))
  try {
    log('index: full build of the Linux 6.1 tree into an empty state folder')
    const full = await untilIndexed(state, log)
    const rss = peakRssMb(full.server.child.pid)
    const indexMb = readdirSync(state).reduce((sum, name) => sum + statSync(path.join(state, name)).size, 0) / 1024 / 1024
    const names = NAMES.flatMap(name => Array.from({ length: 5 }, () => ({ name: 'find_symbol', arguments: { name } })))
    const symbols = await latencies(full.server, names)
    const kmalloc = (await full.server.call('tools/call', { name: 'find_symbol', arguments: { name: 'kmalloc' } })).result.structuredContent.definitions[0]
    const codeCalls = QUERIES.flatMap(query => Array.from({ length: 5 }, () => ({ name: 'search_code', arguments: { query } })))
    // Twice: right after the build (caches cold, the write-ahead log full), then as a warm server answers.
    const code = await latencies(full.server, codeCalls)
    const warm = await latencies(full.server, codeCalls)
    const outline = await latencies(full.server, Array.from({ length: 10 }, () => ({ name: 'get_symbols', arguments: { paths: ['kernel/fork.c'] } })))
    full.server.child.kill()
    // The next server starts once this one is gone (its threads closed the index).
    await new Promise(resolve => full.server.child.once('exit', resolve))

    // Three restarts, the median reported: the first comes right after minutes of full load, when this machine's
    // cores run slower for a while (a restart measured after a 90 s busy loop: 3.2 s, then 2.6 s, 2.6 s).
    log('index: three restarts over the unchanged tree')
    const restarts = []
    for (let i = 0; i < 3; i++) {
      const again = await untilIndexed(state, log)
      again.server.child.kill()
      await new Promise(resolve => again.server.child.once('exit', resolve))
      restarts.push(again)
    }
    const median = (values) => [...values].sort((a, b) => a - b)[1]
    const unchanged = { scanMs: median(restarts.map(r => r.scanMs)), ms: median(restarts.map(r => r.ms)) }
    const runs = restarts.map(r => `${(r.scanMs / 1000).toFixed(1)}/${(r.ms / 1000).toFixed(1)}`).join(', ')

    log('index: restart after touching 100 files')
    const touched = (await import('node:child_process')).execFileSync('find', [path.join(TREE, 'kernel'), '-name', '*.c'], { encoding: 'utf8' }).trim().split('\n').slice(0, 100)
    const now = new Date()
    for (const file of touched) utimesSync(file, now, now)
    const rescan = await untilIndexed(state, log)
    rescan.server.child.kill()

    log('index: --code-index watch, a file written into the indexed tree')
    const watched = await untilIndexed(state, log, ['--code-index', 'watch'])
    const written = path.join(TREE, 'kernel', 'wmcp_bench_watched.c')
    let seenMs
    try {
      writeFileSync(written, 'int wmcp_bench_watched (void) { return 0; }\n')
      const wrote = performance.now()
      // No call finds the index stale (it is seconds old): only the watcher can bring the file in.
      while (performance.now() - wrote < 60_000) {
        const found = await watched.server.call('tools/call', { name: 'find_symbol', arguments: { name: 'wmcp_bench_watched' } })
        if ((found.result.structuredContent?.definitions ?? []).length > 0) {
          seenMs = performance.now() - wrote
          break
        }
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    } finally {
      rmSync(written, { force: true })
      watched.server.child.kill()
    }

    const s = full.status
    return [
      { name: `code index, full build of the Linux 6.1 tree (${s.files} files, ${s.chunks} chunks, ${s.symbols} symbols)`, measured: `${(full.ms / 1000).toFixed(0)} s wall, ${full.cpu.toFixed(0)} s CPU, peak RSS ${rss.toFixed(0)} MB, index file ${indexMb.toFixed(0)} MB`, baseline: '—', ratio: '—', goal: '≤ 5 min on 2 cores, RSS ≤ 1 GB', pass: full.ms <= 300_000 && rss <= 1024 },
      { name: 'code index, rescan of the unchanged tree at a restart (size+mtime scan), median of 3', measured: `the scan ${(unchanged.scanMs / 1000).toFixed(1)} s; spawn → ready ${(unchanged.ms / 1000).toFixed(1)} s (scan/ready per run: ${runs} s)`, baseline: '—', ratio: '—', goal: '≤ 3 s (the scan)', pass: unchanged.scanMs <= 3000 },
      { name: 'code index, restart after touching 100 files', measured: `${(rescan.ms / 1000).toFixed(1)} s (${rescan.status.pending} files parsed again)`, baseline: '—', ratio: '—', goal: 'info', pass: '—' },
      { name: 'code index `--code-index watch`: a file written into the tree, until find_symbol finds it', measured: seenMs === undefined ? 'not found within 60 s' : `${(seenMs / 1000).toFixed(1)} s (0.5 s of quiet, then a rescan of the folder that changed and one file parsed)`, baseline: '—', ratio: '—', goal: 'info', pass: seenMs !== undefined },
      { name: `find_symbol, ${NAMES.length} names × 5 (stdio, as the client waits)`, measured: `p50 ${symbols.p50.toFixed(1)} ms, p95 ${symbols.p95.toFixed(1)} ms`, baseline: '—', ratio: '—', goal: 'p95 ≤ 50 ms', pass: symbols.p95 <= 50 },
      { name: '`find_symbol kmalloc`, first answer', measured: `${kmalloc.path}:${kmalloc.line} (${kmalloc.kind})`, baseline: '—', ratio: '—', goal: 'include/linux/slab.h first', pass: kmalloc.path === 'include/linux/slab.h' },
      { name: `search_code, ${QUERIES.length} queries × 5, right after the build`, measured: `p50 ${code.p50.toFixed(1)} ms, p95 ${code.p95.toFixed(1)} ms`, baseline: '—', ratio: '—', goal: 'p95 ≤ 50 ms', pass: code.p95 <= 50 },
      { name: `search_code, ${QUERIES.length} queries × 5, again (warm)`, measured: `p50 ${warm.p50.toFixed(1)} ms, p95 ${warm.p95.toFixed(1)} ms`, baseline: '—', ratio: '—', goal: 'p95 ≤ 50 ms', pass: warm.p95 <= 50 },
      { name: 'get_symbols kernel/fork.c (86 KB), 10 calls', measured: `p50 ${outline.p50.toFixed(1)} ms, p95 ${outline.p95.toFixed(1)} ms`, baseline: '—', ratio: '—', goal: 'info', pass: '—' }
    ]
  } finally {
    rmSync(state, { recursive: true, force: true })
  }
}
