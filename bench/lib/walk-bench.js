// Whole-tree walks over the Linux 6.1 tree, warm, each beside its floor in the same run (issue 43 item 2):
// find_files against `rg --files -g GLOB` with the ignore rules ours applies (the tree is no git repository, so
// --no-require-git; nothing above the root, no global rules), and list_directory depth N against
// `find -maxdepth N -printf` with a size and mtime per entry (ours lists sizes and mtimes too, and counts the
// entries of the folders at the limit, which the floor does not). Medians of interleaved runs, wall and CPU
// (ours: this process's CPU, walk threads included; the floor's: its rusage as a child). The machine is shared:
// only the ratios side by side mean anything.
// Run alone: `npm run build && node bench/lib/walk-bench.js [--runs 5]`; bench/run.js calls runWalkBench().
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { CORPUS, ensureCorpus } from '../search.mjs'

const repo = fileURLToPath(new URL('../..', import.meta.url))
/** Goal of issue 43 item 2: ours within 1.5× its floor, warm. */
const GOAL = 1.5

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** CPU ms of this process's waited-for children (utime + stime of the reaped ones, /proc/self/stat, 100 Hz ticks). */
function childrenCpuMs () {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
  return (Number(fields[13]) + Number(fields[14])) * 10
}

/** Runs a floor command in the tree, its output drained: wall and CPU ms, and the lines it printed. */
function timeFloor (command, args) {
  const cpu = childrenCpuMs()
  const started = performance.now()
  const r = spawnSync(command, args, { cwd: CORPUS, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] })
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}`)
  return { ms: performance.now() - started, cpu: childrenCpuMs() - cpu, lines: r.stdout.toString('latin1').split('\n').length - 1 }
}

/** Runs one of our tools' `run` in this process: wall and CPU ms, and its answer. */
async function timeOurs (tool, args, ctx) {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const result = await tool.run(args, ctx)
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  if (result.isError) throw new Error(result.content[0].text)
  return { ms, cpu: (used.user + used.system) / 1000, result }
}

/** The cases: our call and its floor's command line. */
function cases (rgPath) {
  const rg = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-ignore-parent', '--files']
  const find = (depth) => ['.', '-mindepth', '1', '-maxdepth', String(depth), '(', '-name', '.*', '-prune', ')', '-o', '-printf', '%y %s %T@ %p\\n']
  return [
    { name: 'find_files `**/slab*.c`, whole Linux 6.1 tree', tool: 'findFiles', args: { patterns: ['**/slab*.c'] }, floor: [rgPath, [...rg, '-g', '**/slab*.c']], floorName: '`rg --files -g`' },
    { name: 'find_files `**/*.rs`, whole Linux 6.1 tree', tool: 'findFiles', args: { patterns: ['**/*.rs'] }, floor: [rgPath, [...rg, '-g', '**/*.rs']], floorName: '`rg --files -g`' },
    { name: 'list_directory depth 3, Linux 6.1 root', tool: 'listDirectory', args: { depth: 3 }, floor: ['find', find(3)], floorName: '`find -maxdepth 3 -printf` (size, mtime)', info: [rgPath, [...rg, '--max-depth', '3']] },
    { name: 'list_directory depth 5, Linux 6.1 root', tool: 'listDirectory', args: { depth: 5, page_size: 100 }, floor: ['find', find(5)], floorName: '`find -maxdepth 5 -printf` (size, mtime)', info: [rgPath, [...rg, '--max-depth', '5']] }
  ]
}

/** Medians of `runs` interleaved runs of each case, after one warm-up run of each contender. */
export async function runWalkBench ({ runs = 5, progress = (line) => process.stderr.write(line + '\n') } = {}) {
  ensureCorpus()
  const dist = path.join(repo, 'dist', 'src')
  if (!existsSync(path.join(dist, 'tools', 'find-files.js'))) throw new Error('dist/ is missing: run `npm run build` first')
  const load = (p) => import(pathToFileURL(path.join(dist, p)).href)
  const [{ createWorkspace }, { findFiles }, { listDirectory }, pino, { rgPath }] = await Promise.all([
    load('services/workspace/index.js'), load('tools/find-files.js'), load('tools/list-directory.js'), import('pino'), import('@vscode/ripgrep')
  ])
  const tools = { findFiles, listDirectory }
  const log = pino.default({ level: 'silent' })
  const workspace = await createWorkspace({ root: realpathSync(CORPUS), log })
  const ctx = { signal: new AbortController().signal, log }
  const rows = []
  for (const c of cases(rgPath)) {
    const tool = tools[c.tool]
    const args = { ...c.args, workspace }
    await timeOurs(tool, args, ctx)
    timeFloor(...c.floor)
    const ours = []
    const floor = []
    const info = []
    let answer
    for (let i = 0; i < runs; i++) {
      // Alternate who goes first: a machine that slows down mid-run then weighs on both alike.
      if (i % 2 === 1) floor.push(timeFloor(...c.floor))
      const o = await timeOurs(tool, args, ctx)
      ours.push(o)
      answer = o.result
      if (i % 2 === 0) floor.push(timeFloor(...c.floor))
      if (c.info !== undefined) info.push(timeFloor(...c.info))
    }
    const row = {
      name: c.name,
      ours_ms: Math.round(median(ours.map(o => o.ms))),
      ours_cpu_ms: Math.round(median(ours.map(o => o.cpu))),
      floor: c.floorName,
      floor_ms: Math.round(median(floor.map(f => f.ms))),
      floor_cpu_ms: Math.round(median(floor.map(f => f.cpu))),
      floor_lines: floor[0].lines,
      answer: answer.content[0].text.split('\n')[0],
      info_ms: info.length > 0 ? Math.round(median(info.map(f => f.ms))) : undefined
    }
    row.ratio = +(median(ours.map(o => o.ms)) / median(floor.map(f => f.ms))).toFixed(2)
    row.cpu_ratio = row.floor_cpu_ms > 0 ? +(row.ours_cpu_ms / row.floor_cpu_ms).toFixed(2) : undefined
    rows.push(row)
    progress(`walk bench: ${c.name}: ours ${row.ours_ms} ms, floor ${row.floor_ms} ms (${row.ratio}×)`)
  }
  return rows
}

/** The rows as results-table rows (goal ≤ 1.5× the floor, wall, warm). */
export function walkRows (rows) {
  return rows.map(r => ({
    name: `${r.name}, warm`,
    measured: `ours ${r.ours_ms} ms (CPU ${r.ours_cpu_ms} ms)`,
    baseline: `${r.floor} ${r.floor_ms} ms (CPU ${r.floor_cpu_ms} ms)`,
    ratio: r.ratio,
    goal: `≤ ${GOAL}× (wall)`,
    pass: r.ratio <= GOAL,
    note: `${r.answer.replace(/\|/g, '\\|')}; floor printed ${r.floor_lines} lines; CPU ours/floor ${r.cpu_ratio ?? '—'}×${r.info_ms !== undefined ? `; \`rg --files --max-depth\` (no stat) ${r.info_ms} ms` : ''}`
  }))
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--runs')
  const rows = await runWalkBench({ runs: at === -1 ? 5 : Number(process.argv[at + 1]) })
  for (const r of rows) process.stdout.write(JSON.stringify(r) + '\n')
  process.exit(0)
}
