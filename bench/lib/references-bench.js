// `npm run bench -- --only references` (also in `--index`): find_references against two oracles, its latency on the
// whole Linux tree, and what references cost the index — each measured side by side in this one run.
//
// - cscope (C): `cscope -b -q -k` over Linux 6.1's mm/, kernel/sched/ and include/linux/, then `cscope -d -L -3 NAME`
//   (the call sites of NAME) for 20 functions and macros, against find_references kind=call over the same folders,
//   compared as (file, line) pairs.
// - the TypeScript language service (TypeScript): every exported function, class, interface and type alias of this
//   repository's src/, `findReferences` at its name (definitions left out), against find_references with that
//   definition meant, compared as (file, line, column).
// - the index of the tree (BENCH_REFS_TREE, default the whole Linux tree) built by the stdio server of this commit
//   and of the commit before references were stored (built into bench/.scratch/), one after the other: index size,
//   wall and CPU time (/proc), peak RSS — then find_references p50/p95, get_repo_map and get_call_graph on it.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpuSeconds } from './measure.js'
import { stdioServer } from './stdio-client.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const REPO = path.join(here, '..', '..')
const LINUX = path.join(here, '..', '.corpus', 'linux-source-6.1')
const BIN = path.join(REPO, 'dist', 'bin', 'cli.js')
const SCRATCH = path.join(here, '..', '.scratch')
/** The folders the cscope comparison covers. */
const CSCOPE_FOLDERS = ['mm', 'kernel/sched', 'include/linux']
/** Functions and macros whose call sites are compared with cscope's (each has callers in those folders). */
export const CSCOPE_NAMES = ['kmalloc', 'kfree', '__free_pages', 'alloc_pages', 'vfree', 'vmalloc', 'schedule', 'wake_up_process', 'find_vma', 'get_page',
  'put_page', 'kmem_cache_alloc', 'page_address', 'mutex_lock', 'spin_lock_irqsave', 'set_page_dirty', 'rcu_read_lock', 'cond_resched', 'lru_add_drain', 'update_rq_clock']
/** The files a map of Linux's mm/ must lead with (issue 41). */
export const MM_CORE = ['mm/page_alloc.c', 'mm/memory.c', 'mm/slub.c', 'mm/vmscan.c', 'mm/mmap.c']
/** Other folders' files one would name first, whose places are reported beside (docs/code-intelligence.md). */
const FOLDER_CORES = { 'kernel/sched': ['core.c', 'fair.c'], 'net/core': ['dev.c', 'skbuff.c', 'sock.c'], 'fs/ext4': ['inode.c', 'super.c', 'extents.c'] }
/** A budget that shows a map's first few dozen files, to place the files named. */
const PLACING_BUDGET = 16000
/** Names timed on the whole tree (the cscope names and find_symbol's bench names). */
export const TIMED_NAMES = [...CSCOPE_NAMES, 'printk', 'copy_process', 'task_struct', 'list_add', 'spin_lock', 'vfs_read']

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]
const ratio = (hit, n) => n === 0 ? 1 : hit / n

/** The commit before references were stored: BENCH_REFS_BASE, else the parent of the commit that added the reference queries. */
function baseCommit () {
  if (process.env.BENCH_REFS_BASE) return process.env.BENCH_REFS_BASE
  const added = execFileSync('git', ['log', '--diff-filter=A', '--format=%H', '--', 'src/services/symbols/reference-queries.ts'], { cwd: REPO, encoding: 'utf8' }).trim().split('\n').at(-1)
  if (!added) throw new Error('no commit adds src/services/symbols/reference-queries.ts: set BENCH_REFS_BASE')
  return execFileSync('git', ['rev-parse', `${added}^`], { cwd: REPO, encoding: 'utf8' }).trim()
}

/** The base commit's bin, built once into bench/.scratch/base-<sha> (its own sources, this checkout's node_modules). */
function baseBin (commit, log) {
  const dir = path.join(SCRATCH, `base-${commit.slice(0, 12)}`)
  const bin = path.join(dir, 'dist', 'bin', 'cli.js')
  if (existsSync(bin)) return bin
  log(`references: building the base commit ${commit.slice(0, 12)} into ${path.relative(REPO, dir)}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { cwd: REPO })
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'))
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
  return bin
}

/**
 * Starts `bin stdio` over `root` with the state folder `state` and waits for its first index: wall and CPU seconds
 * (the server's, all threads), peak RSS. The server writes its index with a write-ahead log (readers never hold the
 * writer up, as they can `index`'s staging file on a loaded machine).
 */
async function buildWith (bin, root, state, log) {
  const server = stdioServer(bin, root, ['--state-dir', state, '--tool-timeout-ms', '600000'])
  const started = performance.now()
  await server.initialize()
  for (let polls = 0; ; polls++) {
    const info = (await server.call('tools/call', { name: 'get_workspace_info', arguments: {} })).result
    const status = info.structuredContent.code_index
    if (status.state === 'ready') {
      const rss = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))[1]) / 1024
      return { server, wall: (performance.now() - started) / 1000, cpu: cpuSeconds(server.child.pid), rssMb: rss, status }
    }
    if (status.state === 'failed' || status.state === 'unavailable') throw new Error(`the index failed: ${JSON.stringify(status)}`)
    if (polls % 150 === 0) log(`  index: ${status.done} of ${status.pending} files (${Math.round((performance.now() - started) / 1000)} s)`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

/** Ends a server by closing its stdin (it closes the index, checkpointing its log), then the index's bytes on disk. */
async function stopAndMeasure (server, state) {
  const exited = new Promise(resolve => server.child.once('exit', resolve))
  server.child.stdin.end()
  await exited
  return readdirSync(state).filter(n => /\.sqlite(-wal)?$/.test(n)).reduce((sum, n) => sum + statSync(path.join(state, n)).size, 0)
}

/** Every reference find_references gives for `args`, page after page. */
async function allReferences (server, args) {
  const out = []
  for (let offset = 0; ;) {
    const answer = await server.call('tools/call', { name: 'find_references', arguments: { ...args, page_size: 200, max_response_tokens: 20000, offset } })
    if (answer.result.isError) throw new Error(`find_references ${JSON.stringify(args)}: ${answer.result.content[0].text}`)
    const { references, pagination } = answer.result.structuredContent
    out.push(...references)
    if (!pagination.has_more) return out
    offset = pagination.next_offset
  }
}

/** cscope's call sites of each name against find_references kind=call, over CSCOPE_FOLDERS. */
export async function againstCscope (server, tree, log) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wmcp-cscope-'))
  try {
    const files = execFileSync('find', [...CSCOPE_FOLDERS, '-name', '*.[ch]'], { cwd: tree, encoding: 'utf8' })
    execFileSync('sh', ['-c', `cat > "${dir}/files"`], { input: files })
    log(`references: cscope -b -q -k over ${files.trim().split('\n').length} files`)
    execFileSync('cscope', ['-b', '-q', '-k', '-i', `${dir}/files`, '-f', `${dir}/cscope.out`], { cwd: tree })
    const rows = []
    for (const name of CSCOPE_NAMES) {
      const oracle = new Set(execFileSync('cscope', ['-d', '-L', '-3', name, '-f', `${dir}/cscope.out`], { cwd: tree, encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(line => {
        const [file, , at] = line.split(' ')
        return `${file}:${at}`
      }))
      const ours = new Set()
      for (const folder of CSCOPE_FOLDERS) for (const r of await allReferences(server, { name, kind: 'call', path: folder })) ours.add(`${r.path}:${r.line}`)
      const hit = [...ours].filter(x => oracle.has(x)).length
      rows.push({ name, oracle: oracle.size, ours: ours.size, hit, missed: [...oracle].filter(x => !ours.has(x)), extra: [...ours].filter(x => !oracle.has(x)) })
    }
    return rows
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The TypeScript language service's references of every exported declaration of src/, against find_references. */
async function againstTypeScript (server, log) {
  const ts = (await import('typescript')).default
  const files = ts.sys.readDirectory(path.join(REPO, 'src'), ['.ts'])
  const texts = new Map(files.map(f => [f, readFileSync(f, 'utf8')]))
  const options = ts.parseJsonConfigFileContent(ts.readConfigFile(path.join(REPO, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, REPO).options
  const service = ts.createLanguageService({
    getScriptFileNames: () => files,
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => {
      const text = texts.get(f) ?? (existsSync(f) ? readFileSync(f, 'utf8') : undefined)
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text)
    },
    getCurrentDirectory: () => REPO,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories
  })
  const targets = []
  for (const file of files) {
    const source = ts.createSourceFile(file, texts.get(file), ts.ScriptTarget.Latest, true)
    for (const s of source.statements) {
      const exported = s.modifiers?.some(m => m.kind === ts.SyntaxKind.ExportKeyword)
      if (exported && s.name !== undefined && (ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s))) {
        targets.push({ file, name: s.name.text, at: s.name.getStart(), line: source.getLineAndCharacterOfPosition(s.name.getStart()).line + 1 })
      }
    }
  }
  log(`references: the TypeScript language service on ${targets.length} exported declarations of src/`)
  const program = service.getProgram()
  const src = path.join(REPO, 'src') + path.sep
  let oracleTotal = 0
  let oursTotal = 0
  let hits = 0
  const misses = []
  for (const target of targets) {
    const oracle = new Set()
    for (const symbol of service.findReferences(target.file, target.at) ?? []) {
      for (const r of symbol.references) {
        if (r.isDefinition || !r.fileName.startsWith(src)) continue
        const at = ts.getLineAndCharacterOfPosition(program.getSourceFile(r.fileName), r.textSpan.start)
        oracle.add(`${path.relative(REPO, r.fileName)}:${at.line + 1}:${at.character + 1}`)
      }
    }
    const ours = new Set((await allReferences(server, { name: target.name, path: 'src', definition: `${path.relative(REPO, target.file)}:${target.line}` })).map(r => `${r.path}:${r.line}:${r.column}`))
    const hit = [...ours].filter(x => oracle.has(x)).length
    oracleTotal += oracle.size
    oursTotal += ours.size
    hits += hit
    if (hit < oracle.size || hit < ours.size) misses.push(`${target.name} (${path.relative(REPO, target.file)}): ${oracle.size - hit} missed, ${ours.size - hit} extra`)
  }
  return { targets: targets.length, oracle: oracleTotal, ours: oursTotal, hits, misses }
}

/** Runs the section; returns report rows and the per-name tables. */
export async function runReferencesBench (log) {
  if (!existsSync(path.join(LINUX, 'Makefile'))) throw new Error('the Linux tree is missing: run bench/corpus.sh first')
  const tree = process.env.BENCH_REFS_TREE ? path.resolve(LINUX, process.env.BENCH_REFS_TREE) : LINUX
  const shown = tree.startsWith(path.dirname(LINUX) + path.sep) ? path.relative(path.dirname(LINUX), tree) : tree
  const base = baseCommit()
  const baseline = baseBin(base, log)
  const states = { base: mkdtempSync(path.join(tmpdir(), 'wmcp-refs-base-')), ours: mkdtempSync(path.join(tmpdir(), 'wmcp-refs-ours-')), repo: mkdtempSync(path.join(tmpdir(), 'wmcp-refs-repo-')) }
  try {
    log(`references: index ${shown} with the base commit ${base.slice(0, 12)}`)
    const before = await buildWith(baseline, tree, states.base, log)
    before.bytes = await stopAndMeasure(before.server, states.base)
    rmSync(states.base, { recursive: true, force: true })
    log(`references: index ${shown} with this commit`)
    const after = await buildWith(BIN, tree, states.ours, log)
    const linux = after.server
    const times = []
    for (let round = 0; round < 5; round++) {
      for (const name of TIMED_NAMES) {
        const started = performance.now()
        const answer = await linux.call('tools/call', { name: 'find_references', arguments: { name } })
        if (answer.result.isError) throw new Error(`find_references ${name}: ${answer.result.content[0].text}`)
        times.push(performance.now() - started)
      }
    }
    // The whole tree, or a part of it (BENCH_REFS_TREE) holding the compared folders (a copy of mm, kernel/sched, include/linux).
    const cscope = CSCOPE_FOLDERS.every(folder => existsSync(path.join(tree, folder))) ? await againstCscope(linux, tree, log) : []
    // The map of mm/: the first call reads what it needs from a cold cache, the next ones as a warm server answers.
    const maps = []
    if (existsSync(path.join(tree, 'mm'))) {
      for (let round = 0; round < 4; round++) {
        const started = performance.now()
        const answer = await linux.call('tools/call', { name: 'get_repo_map', arguments: { path: 'mm' } })
        if (answer.result.isError) throw new Error(`get_repo_map: ${answer.result.content[0].text}`)
        maps.push({ ms: performance.now() - started, files: answer.result.structuredContent.files.map(f => f.path) })
      }
    }
    // Where the files named come in each folder's map (a bigger budget than the default, to see past its first dozen).
    const placed = []
    for (const [folder, core] of [['mm', MM_CORE.map(f => f.slice(3))], ...Object.entries(FOLDER_CORES)]) {
      if (!existsSync(path.join(tree, folder))) continue
      const answer = await linux.call('tools/call', { name: 'get_repo_map', arguments: { path: folder, max_response_tokens: PLACING_BUDGET } })
      if (answer.result.isError) throw new Error(`get_repo_map ${folder}: ${answer.result.content[0].text}`)
      const files = answer.result.structuredContent.files.map(f => f.path)
      placed.push({ folder, core, shown: files.length, places: core.map(file => files.indexOf(`${folder}/${file}`) + 1), lead: files.slice(0, 6).map(f => f.slice(folder.length + 1)) })
    }
    const graphs = []
    for (const name of ['kmem_cache_alloc', 'schedule', 'copy_process']) {
      const started = performance.now()
      const answer = await linux.call('tools/call', { name: 'get_call_graph', arguments: { name, depth: 2 } })
      if (answer.result.isError) throw new Error(`get_call_graph: ${answer.result.content[0].text}`)
      graphs.push(performance.now() - started)
    }
    after.bytes = await stopAndMeasure(linux, states.ours)

    log('references: index this repository')
    const repo = (await buildWith(BIN, REPO, states.repo, log)).server
    const typescript = await againstTypeScript(repo, log)
    await stopAndMeasure(repo, states.repo)

    const c = cscope.reduce((sum, r) => ({ oracle: sum.oracle + r.oracle, ours: sum.ours + r.ours, hit: sum.hit + r.hit }), { oracle: 0, ours: 0, hit: 0 })
    const rows = []
    if (cscope.length > 0) {
      const recall = ratio(c.hit, c.oracle)
      const precision = ratio(c.hit, c.ours)
      rows.push({ name: `find_references kind=call against cscope -3, ${CSCOPE_NAMES.length} functions and macros over Linux ${CSCOPE_FOLDERS.join(', ')}`, measured: `recall ${recall.toFixed(3)}, precision ${precision.toFixed(3)} (${c.hit} of cscope's ${c.oracle} call sites; ${c.ours} ours)`, baseline: 'cscope 15.9 `-d -L -3`', ratio: '—', goal: 'recall ≥ 0.95, precision ≥ 0.9', pass: recall >= 0.95 && precision >= 0.9 })
    }
    const tr = ratio(typescript.hits, typescript.oracle)
    const tp = ratio(typescript.hits, typescript.ours)
    rows.push({ name: `find_references against the TypeScript language service, ${typescript.targets} exported declarations of src/ (definition meant given)`, measured: `recall ${tr.toFixed(3)}, precision ${tp.toFixed(3)} (${typescript.hits} of its ${typescript.oracle} references; ${typescript.ours} ours)`, baseline: '`ts.createLanguageService().findReferences`', ratio: '—', goal: 'recall ≥ 0.95, precision ≥ 0.9', pass: tr >= 0.95 && tp >= 0.9 })
    rows.push({ name: `find_references, ${TIMED_NAMES.length} names × 5 over ${shown} (stdio, shared index, as the client waits)`, measured: `p50 ${percentile(times, 0.5).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms`, baseline: '—', ratio: '—', goal: 'p50 ≤ 50 ms', pass: percentile(times, 0.5) <= 50 })
    for (const { folder, core, shown: listed, places, lead } of placed) {
      const name = `get_repo_map path=${folder} on the Linux index: where ${core.join(', ')} come`
      const goal = folder === 'mm' ? 'the five lead (places 1–5)' : 'info'
      rows.push({ name, measured: `places ${places.map(p => p === 0 ? `>${listed}` : p).join(', ')}; the map leads with ${lead.join(', ')}`, baseline: '—', ratio: '—', goal, pass: folder === 'mm' ? places.every(p => p >= 1 && p <= core.length) : '—' })
    }
    if (maps.length > 0) {
      const warm = maps.slice(1).map(m => m.ms)
      rows.push({ name: 'get_repo_map path=mm on the Linux index, time', measured: `first ${maps[0].ms.toFixed(0)} ms; warm median ${percentile(warm, 0.5).toFixed(0)} ms`, baseline: '—', ratio: '—', goal: 'info: cheap when warm', pass: '—' })
    }
    rows.push({ name: 'get_call_graph depth 2 (kmem_cache_alloc, schedule, copy_process) on the Linux index', measured: graphs.map(ms => `${ms.toFixed(0)} ms`).join(', '), baseline: '—', ratio: '—', goal: 'info', pass: '—' })
    rows.push({ name: `index size of ${shown} with references, against ${base.slice(0, 8)} without`, measured: `${(after.bytes / 1048576).toFixed(0)} MB`, baseline: `${(before.bytes / 1048576).toFixed(0)} MB`, ratio: after.bytes / before.bytes, goal: '≤ 1.3×', pass: after.bytes <= 1.3 * before.bytes })
    rows.push({ name: `index build of ${shown} with references, against ${base.slice(0, 8)} without (the stdio server's first scan, one after the other)`, measured: `${after.wall.toFixed(0)} s wall, ${after.cpu.toFixed(0)} s CPU, peak RSS ${after.rssMb.toFixed(0)} MiB`, baseline: `${before.wall.toFixed(0)} s wall, ${before.cpu.toFixed(0)} s CPU, peak RSS ${before.rssMb.toFixed(0)} MiB`, ratio: after.wall / before.wall, cpuRatio: before.cpu / after.cpu, goal: '≤ 1.3× (wall)', pass: after.wall <= 1.3 * before.wall, note: `CPU ${(after.cpu / before.cpu).toFixed(2)}×` })
    const table = ['| name | cscope call sites | ours | recall | precision | cscope only | ours only |', '|---|---|---|---|---|---|---|',
      ...cscope.map(r => `| ${r.name} | ${r.oracle} | ${r.ours} | ${ratio(r.hit, r.oracle).toFixed(3)} | ${ratio(r.hit, r.ours).toFixed(3)} | ${r.missed.slice(0, 3).join(' ')} | ${r.extra.slice(0, 3).join(' ')} |`)]
    const markdown = `## find_references against cscope\n\n${table.join('\n')}\n\n## find_references against the TypeScript language service\n\n${typescript.misses.length === 0 ? 'Every declaration agrees.' : typescript.misses.map(m => `- ${m}`).join('\n')}`
    return { rows, markdown }
  } finally {
    for (const dir of Object.values(states)) rmSync(dir, { recursive: true, force: true })
  }
}
