// `npm run bench -- --only outline-cost`: what the outline's repair costs an index build. `workspace-mcp index` over
// Linux 6.1's kernel/ and mm/ (bench/corpus.sh; BENCH_OUTLINE_COST_PARTS for other folders), built by this tree's dist and by a build of the commit before the
// repair (BENCH_OUTLINE_BEFORE, a commit of this repository's history: built once into a temporary folder from
// `git archive`, with this checkout's node_modules), alternating, in one run: wall and CPU time (the process and its
// threads) of each build, medians, and their ratio.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './measure.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const REPO = path.join(here, '..', '..')
const LINUX = path.join(here, '..', '.corpus', 'linux-source-6.1')
/** The last commit before the outline was checked against the braces. */
const BEFORE = '4f0ed25'
/** The folders indexed: BENCH_OUTLINE_COST_PARTS=kernel/sched,… for others. */
const PARTS = process.env.BENCH_OUTLINE_COST_PARTS?.split(',') ?? ['kernel', 'mm']

/** Builds `ref` into a temporary folder; resolves with the folder (its dist/bin/cli.js is the bin). */
function buildRef (ref, log) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wmcp-outline-before-'))
  log(`outline-cost: building ${ref} into ${dir}`)
  const tar = path.join(dir, 'tree.tar')
  execFileSync('git', ['archive', '--format=tar', '-o', tar, ref], { cwd: REPO })
  execFileSync('tar', ['-xf', tar, '-C', dir])
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'))
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
  return dir
}

/** One `index` build of `roots` by `bin`; resolves with wall seconds, CPU seconds (its threads included) and its counts. */
async function indexOnce (bin, roots) {
  const state = mkdtempSync(path.join(tmpdir(), 'wmcp-outline-cost-'))
  try {
    // bash's `times` prints the CPU its children used: the build, every thread included.
    const args = [bin, 'index', ...roots.flatMap(r => ['--root', r]), '--state-dir', state, '--index-threads', '2', '--log-level', 'warn']
    const child = spawn('bash', ['-c', '"$@" >&2; times', '_', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', chunk => { out += chunk })
    child.stderr.on('data', chunk => { err += chunk })
    const started = performance.now()
    const code = await new Promise(resolve => child.once('exit', resolve))
    const wall = (performance.now() - started) / 1000
    if (code !== 0) throw new Error(`index exited ${code}: ${err}`)
    const [user, system] = [...out.trim().split('\n')[1].matchAll(/(\d+)m([\d.]+)s/g)].map(m => Number(m[1]) * 60 + Number(m[2]))
    const counts = /: (\d+) source files, (\d+) chunks, (\d+) symbols/.exec(err)
    const indexMb = readdirSync(state).reduce((sum, name) => sum + statSync(path.join(state, name)).size, 0) / 1048576
    return { wall, cpu: user + system, files: Number(counts?.[1]), symbols: Number(counts?.[3]), indexMb }
  } finally {
    rmSync(state, { recursive: true, force: true })
  }
}

/** Runs the section; resolves with its rows. */
export async function runOutlineCostBench (log, { rounds = 3, before = process.env.BENCH_OUTLINE_BEFORE ?? BEFORE } = {}) {
  if (!existsSync(path.join(LINUX, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const old = buildRef(before, log)
  try {
    const bins = { before: path.join(old, 'dist', 'bin', 'cli.js'), after: path.join(REPO, 'dist', 'bin', 'cli.js') }
    const roots = PARTS.map(p => path.join(LINUX, p))
    const runs = { before: [], after: [] }
    for (let round = 0; round < rounds; round++) {
      // The order alternates, so neither build always meets a warmer page cache or a quieter machine.
      for (const which of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
        const run = await indexOnce(bins[which], roots)
        log(`outline-cost: round ${round + 1}, ${which}: ${run.wall.toFixed(1)} s wall, ${run.cpu.toFixed(1)} s CPU, ${run.files} files, ${run.symbols} symbols`)
        // A file the parser gave up on is passed by without a word, and a build missing some is faster: no figure then.
        const first = runs.before[0] ?? runs.after[0]
        if (first !== undefined && run.files !== first.files) throw new Error(`outline-cost: a build indexed ${run.files} files, another ${first.files}: a parse failed, the times are not comparable`)
        runs[which].push(run)
      }
    }
    const wall = { before: median(runs.before.map(r => r.wall)), after: median(runs.after.map(r => r.wall)) }
    const cpu = { before: median(runs.before.map(r => r.cpu)), after: median(runs.after.map(r => r.cpu)) }
    const { files, symbols, indexMb } = runs.after[0]
    return [{
      name: `index build of Linux 6.1 ${PARTS.map(p => `${p}/`).join(' + ')} (${files} files), 2 parser threads: outlines checked against the braces, against ${before} (before), median of ${rounds}`,
      measured: `${wall.after.toFixed(1)} s wall, ${cpu.after.toFixed(1)} s CPU; ${symbols} symbols, index ${indexMb.toFixed(1)} MB`,
      baseline: `${before}: ${wall.before.toFixed(1)} s wall, ${cpu.before.toFixed(1)} s CPU; ${runs.before[0].symbols} symbols, index ${runs.before[0].indexMb.toFixed(1)} MB`,
      ratio: wall.after / wall.before,
      cpuRatio: cpu.before / cpu.after,
      goal: 'info (the cost of the repair)',
      pass: undefined
    }]
  } finally {
    rmSync(old, { recursive: true, force: true })
  }
}
