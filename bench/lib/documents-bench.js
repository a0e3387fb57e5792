// Non-text reads and git history (issue 9), against a built stdio bin, each beside its floor in the same run.
//
// 1. read_files of a 200-page PDF (pages 1–50, the first call also starts the extraction thread; then warm;
//    then one page), a 1920×1080 PNG, and a 1 MB Shift_JIS file beside the same text as UTF-8 (the
//    decoder's cost is the ratio).
// 2. git_log (20 commits), git_show (HEAD~1) and git_blame (100 lines of README.md) over this checkout,
//    beside `git log -20` / `git show` / `git blame` spawned directly: the floor no server can beat.
// 3. Several roots: this checkout's src/ and test/ served as two roots beside a copy of both under one root —
//    search_regex, find_files and list_directory over everything; the ratio is what serving them apart costs.
// `npm run bench -- --only documents`. Data is generated in a temp dir and removed afterwards.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import iconv from 'iconv-lite'
import { makePdf, makePng } from './documents.js'
import { stdioServer } from './stdio-client.js'

const repo = fileURLToPath(new URL('../..', import.meta.url))

function server (bin, root, extra) {
  const { child, call, initialize } = stdioServer(bin, root, extra)
  const tool = async (name, args) => {
    const started = performance.now()
    const msg = await call('tools/call', { name, arguments: args })
    if (msg.result?.isError === true || msg.error !== undefined) throw new Error(`${name}: ${JSON.stringify(msg.result ?? msg.error).slice(0, 300)}`)
    return performance.now() - started
  }
  return { tool, start: initialize, stop: () => child.kill('SIGTERM') }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (ms) => ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`

async function samples (n, fn) {
  const out = []
  for (let i = 0; i < n; i++) out.push(await fn())
  return median(out)
}

function timedGit (args) {
  const started = performance.now()
  execFileSync('git', args, { cwd: repo, stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent', GIT_PAGER: 'cat' } })
  return performance.now() - started
}

/** Runs the section; returns table rows. */
export async function runDocumentsBench ({ bin, samples: n = 7 } = {}, log = () => {}) {
  const BIN = path.resolve(bin ?? fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url)))
  const root = mkdtempSync(path.join(tmpdir(), 'wmcp-bench-documents-'))
  const pages = Array.from({ length: 200 }, (_, p) => Array.from({ length: 40 }, (_, l) => `Page ${p + 1} line ${l + 1}: the quick brown fox jumps over the lazy dog`).join('\n'))
  writeFileSync(path.join(root, 'doc.pdf'), makePdf(pages))
  writeFileSync(path.join(root, 'shot.png'), makePng(1920, 1080))
  const japanese = Array.from({ length: 12000 }, (_, i) => `${i}行目：東京都渋谷区の住所と電話番号のサンプルです。`).join('\n') + '\n'
  writeFileSync(path.join(root, 'sjis.txt'), iconv.encode(japanese, 'shift_jis'))
  writeFileSync(path.join(root, 'utf8.txt'), japanese)
  const docs = server(BIN, root)
  const history = server(BIN, repo)
  try {
    await docs.start()
    await history.start()
    log('   read_files: PDF, PNG, Shift_JIS')
    const cold = await docs.tool('read_files', { files: [{ path: 'doc.pdf', pages: '1-50' }], max_response_tokens: 20000 })
    const warm = await samples(n, () => docs.tool('read_files', { files: [{ path: 'doc.pdf', pages: '1-50' }], max_response_tokens: 20000 }))
    const onePage = await samples(n, () => docs.tool('read_files', { files: [{ path: 'doc.pdf', pages: '7' }] }))
    const png = await samples(n, () => docs.tool('read_files', { files: [{ path: 'shot.png' }] }))
    const utf8 = await samples(n, () => docs.tool('read_files', { files: [{ path: 'utf8.txt', start_line: 5000, end_line: 5200 }] }))
    const sjis = await samples(n, () => docs.tool('read_files', { files: [{ path: 'sjis.txt', start_line: 5000, end_line: 5200 }] }))
    const rows = [
      { name: 'read_files, 200-page PDF, pages 1–50 (first call: starts the extraction thread)', measured: fmt(cold), baseline: '—', goal: 'info' },
      { name: 'read_files, 200-page PDF, pages 1–50', measured: `median ${fmt(warm)}`, baseline: `one page: ${fmt(onePage)}`, goal: 'info', note: `${n} samples; text extraction runs off the event loop` },
      { name: 'read_files, 1920×1080 PNG as image content', measured: `median ${fmt(png)}`, baseline: '—', goal: 'info' },
      { name: 'read_files, lines 5000–5200 of a 1 MB Shift_JIS file', measured: `median ${fmt(sjis)}`, baseline: `same text in UTF-8: ${fmt(utf8)}`, ratio: sjis / utf8, goal: 'info', note: 'detection and iconv-lite decoding against the UTF-8 path' }
    ]
    let git = true
    try {
      execFileSync('git', ['rev-parse', '--git-dir'], { cwd: repo, stdio: 'ignore' })
    } catch {
      git = false
    }
    if (git) {
      log('   git history tools over this checkout, beside git itself')
      const calls = [
        ['git_log, 20 commits', () => history.tool('git_log', { page_size: 20 }), ['log', '-20', '--format=%H %an %s']],
        ['git_show HEAD~1 (message, files, patch)', () => history.tool('git_show', { ref: 'HEAD~1' }), ['show', 'HEAD~1']],
        ['git_blame README.md lines 1–100', () => history.tool('git_blame', { path: 'README.md', end_line: 100 }), ['blame', '--porcelain', '-L1,100', 'HEAD', '--', 'README.md']]
      ]
      for (const [name, ours, raw] of calls) {
        const measured = await samples(n, ours)
        const floor = await samples(n, async () => timedGit(raw))
        rows.push({ name, measured: `median ${fmt(measured)}`, baseline: `\`git ${raw[0]}\` alone: ${fmt(floor)}`, ratio: measured / floor, goal: 'info', note: 'ours adds rev-parse, the budget fit and the hardened environment' })
      }
    }
    rows.push(...await rootsRows(BIN, root, n, log))
    return rows
  } finally {
    docs.stop()
    history.stop()
    rmSync(root, { recursive: true, force: true })
  }
}

/** Two roots (copies of src/ and test/) against one root holding the same two folders. */
async function rootsRows (bin, scratch, n, log) {
  log('   several roots: src/ and test/ as two roots, beside one root holding both')
  const one = path.join(scratch, 'one')
  for (const dir of ['src', 'test']) cpSync(path.join(repo, dir), path.join(one, dir), { recursive: true })
  const two = server(bin, path.join(one, 'src'), ['--root', path.join(one, 'test')])
  const single = server(bin, one)
  try {
    await two.start()
    await single.start()
    let k = 0
    // A new pattern per sample: a repeated one would be a page of the cached result set, not a search.
    const calls = [
      ['search_regex over everything, files mode', (s) => s.tool('search_regex', { pattern: `function|zz${k++}`, output_mode: 'files', page_size: 50 })],
      ['find_files **/*.ts over everything', (s) => s.tool('find_files', { patterns: ['**/*.ts'], exclude: [`zz${k++}`] })],
      ['list_directory depth 3 over everything', (s) => s.tool('list_directory', { depth: 3, page_size: 100 })]
    ]
    const rows = []
    for (const [name, call] of calls) {
      const both = await samples(n, () => call(two))
      const alone = await samples(n, () => call(single))
      rows.push({ name: `${name}: two roots`, measured: `median ${fmt(both)}`, baseline: `one root holding both: ${fmt(alone)}`, ratio: both / alone, goal: 'info', note: 'one walk or ripgrep run per root, merged in root order' })
    }
    return rows
  } finally {
    two.stop()
    single.stop()
  }
}
