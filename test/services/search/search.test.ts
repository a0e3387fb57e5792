import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { rgPath } from '@vscode/ripgrep'
import { createSearch, type CreateSearchOptions, type SearchPage, type SearchRequest } from '../../../src/services/search/search.js'
import { displayName } from '../../../src/services/workspace/path-names.js'
import { hostileServices, toolCodeOf } from '../../helpers/workspace-fixture.js'
import { beginEvent, countRecord, endEvent, matchEvent, scriptRg } from '../../helpers/stand-in-rg.js'
import { waitUntil } from '../../helpers/wait.js'

const log = pino({ level: 'silent' })

async function fixture (t: { teardown(fn: () => void): void }, extra: Partial<CreateSearchOptions> = {}) {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log, ...extra })
  t.teardown(() => search.close())
  return { ...fx, search }
}

/** Every (path, line, text) of a content search, page by page. */
async function allHits (search: Awaited<ReturnType<typeof createSearch>>, request: SearchRequest): Promise<string[]> {
  const out: string[] = []
  for (let offset = 0, guard = 0; guard < 100; guard++) {
    const page = await search.search(request, { offset, pageSize: 7 })
    for (const item of page.content) out.push(`${item.path}:${item.hit.line}:${item.hit.text}`)
    if (offset + 7 >= page.total) break
    offset += 7
  }
  return out
}

/** What ripgrep itself prints for the same query (same walk flags), sorted by path then line. */
function rawRg (root: string, pattern: string, extra: string[] = []): string[] {
  let stdout: Buffer
  try {
    stdout = execFileSync(rgPath, ['--no-config', '--no-require-git', '--no-ignore-global', '--no-ignore-parent', '--max-filesize', '10M',
      '--line-number', '--with-filename', '--no-heading', '--null', ...extra, '--regexp', pattern, '--', '.'], { cwd: root })
  } catch (err) {
    stdout = (err as { stdout?: Buffer }).stdout ?? Buffer.alloc(0)
  }
  const rows: Array<{ file: string, line: number, text: string }> = []
  for (let start = 0; start < stdout.length;) {
    const nul = stdout.indexOf(0, start)
    const eol = stdout.indexOf(10, nul)
    const rest = stdout.subarray(nul + 1, eol).toString('utf8')
    const colon = rest.indexOf(':')
    rows.push({ file: displayName(stdout.subarray(start, nul)).replace(/^\.\//, ''), line: Number(rest.slice(0, colon)), text: rest.slice(colon + 1).replace(/\r$/, '') })
    start = eol + 1
  }
  rows.sort((a, b) => a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line)
  return rows.map(r => `${r.file}:${r.line}:${r.text}`)
}

function addFiles (root: string, count: number): void {
  for (let i = 0; i < count; i++) {
    fs.mkdirSync(path.join(root, 'many', `d${i % 4}`), { recursive: true })
    fs.writeFileSync(path.join(root, 'many', `d${i % 4}`, `f${i}.txt`), Array.from({ length: 5 }, (_, n) => `needle ${i}-${n}\nhay\n`).join(''))
  }
}

t.test('content results equal ripgrep\'s own for the same query, in (path, line) order', async (t) => {
  const fx = await fixture(t)
  addFiles(fx.root, 12)

  for (const pattern of ['helper', 'needle \\d+-[13]', 'e']) {
    const ours = await allHits(fx.search, { pattern })
    t.strictSame(ours, rawRg(fx.root, pattern), pattern)
  }
  t.strictSame(await allHits(fx.search, { pattern: 'HELPER', ignoreCase: true, include: ['*.ts'] }), rawRg(fx.root, 'HELPER', ['--ignore-case', '--glob', '*.ts']))
  // An exclude glob is negated for ripgrep, written with its '!' or without.
  const excluded = rawRg(fx.root, 'e', ['--glob', '!*.ts'])
  t.ok(excluded.length > 0 && excluded.length < (await allHits(fx.search, { pattern: 'e' })).length, 'the exclusion removes some hits, not all')
  t.strictSame(await allHits(fx.search, { pattern: 'e', exclude: ['*.ts'] }), excluded)
  t.strictSame(await allHits(fx.search, { pattern: 'e', exclude: ['!*.ts'] }), excluded)
})

t.test('the count-then-fetch strategy (too many matches to hold) gives the same pages', async (t) => {
  const fx = await fixture(t, {})
  addFiles(fx.root, 12)

  const ours = await allHits(fx.search, { pattern: 'needle' })

  t.strictSame(ours, rawRg(fx.root, 'needle'))
  const page = await fx.search.search({ pattern: 'needle' }, { offset: 23, pageSize: 4 })
  t.equal(page.total, 60)
  t.equal(page.totalIsLowerBound, false)
  t.strictSame(page.content.map(i => `${i.path}:${i.hit.line}`), ours.slice(23, 27).map(s => s.split(':').slice(0, 2).join(':')))
})

t.test('counted files that no longer match when their page is fetched show no lines: none are invented', async (t) => {
  // Fewer than one file's 5 matches: no file is seen whole in the first pass, so every page is fetched
  // afresh (ripgrep visits files in no fixed order, and a file it happened to finish first keeps its lines).
  const fx = await fixture(t, {})
  addFiles(fx.root, 12)

  const first = await fx.search.search({ pattern: 'needle' }, { offset: 0, pageSize: 4 })
  for (let i = 0; i < 12; i++) fs.writeFileSync(path.join(fx.root, 'many', `d${i % 4}`, `f${i}.txt`), 'hay\n')
  const later = await fx.search.search({ pattern: 'needle' }, { offset: 40, pageSize: 4 })

  t.equal(first.total, 60)
  t.equal(first.content.length, 4)
  t.same(later.content, [], 'the set counted earlier is paged; its files now have nothing to show')
})

t.test('when even counting is too much JSON, a --count pass gives the same pages', async (t) => {
  const fx = await fixture(t)
  addFiles(fx.root, 12)

  const ours = await allHits(fx.search, { pattern: 'needle', contextLines: 1 })

  t.strictSame(ours, rawRg(fx.root, 'needle'))
  const page = await fx.search.search({ pattern: 'needle', contextLines: 1 }, { offset: 58, pageSize: 5 })
  t.equal(page.total, 60)
  t.equal(page.content.length, 2)
  t.equal(page.content[1].context.length, 2, 'context comes with fetched pages too')
})

t.test('files and count modes equal rg -l and rg -c', async (t) => {
  const fx = await fixture(t)

  const files = await fx.search.search({ pattern: 'helper', mode: 'files' }, { offset: 0, pageSize: 100 })
  const count = await fx.search.search({ pattern: 'helper', mode: 'count' }, { offset: 0, pageSize: 100 })

  const raw = rawRg(fx.root, 'helper')
  const rawFiles = [...new Set(raw.map(r => r.split(':')[0]))]
  t.strictSame(files.files.map(f => f.path), rawFiles)
  t.strictSame(count.files.map(f => `${f.path}=${f.count}`), rawFiles.map(f => `${f}=${raw.filter(r => r.startsWith(f + ':')).length}`))
  t.equal(count.lineCount, raw.length)
})

t.test('page 2 from the cache equals a fresh search\'s page 2', async (t) => {
  const fx = await fixture(t)
  addFiles(fx.root, 8)
  const fresh = await createSearch({ workspace: fx.workspace, log })

  const first = await fx.search.search({ pattern: 'needle' }, { offset: 0, pageSize: 10 })
  const second = await fx.search.search({ pattern: 'needle' }, { offset: 10, pageSize: 10 })
  const other = await fresh.search({ pattern: 'needle' }, { offset: 10, pageSize: 10 })

  t.equal(first.cached, false)
  t.equal(second.cached, true)
  t.equal(other.cached, false)
  t.strictSame(second.content, other.content)
  t.equal(second.total, other.total)
})

t.test('bad patterns are tool errors, never zero matches', async (t) => {
  const fx = await fixture(t)
  const code = (request: SearchRequest) => toolCodeOf(fx.search.search(request, { offset: 0, pageSize: 10 }))

  t.equal(await code({ pattern: 'foo(' }), 'INVALID_REGEX')
  // The pattern as the caller wrote it, not as ripgrep compiled it (inside "(?:…)"), and the markers under it.
  const bad = await fx.search.search({ pattern: 'a{2' }, { offset: 0, pageSize: 10 }).catch((err: Error) => err)
  t.match((bad as Error).message, /could not parse the pattern:\nregex parse error:\n {4}a\{2\n {5}\^\^\nerror: unclosed counted repetition/)
  t.notMatch((bad as Error).message, /\(\?:/)
  const unclosed = await fx.search.search({ pattern: '(x' }, { offset: 0, pageSize: 10 }).catch((err: Error) => err)
  t.match((unclosed as Error).message, /\n {4}\(x\n {4}\^\n/, 'a marker under the wrapper moves to the pattern\'s start')
  t.equal(await code({ pattern: '(?<=a)b' }), 'UNSUPPORTED_REGEX_FEATURE')
  t.equal(await code({ pattern: '(a)\\1' }), 'UNSUPPORTED_REGEX_FEATURE')
  t.equal(await code({ pattern: '(\\w{100}){100}' }), 'REGEX_TOO_COMPLEX')
  t.equal(await code({ pattern: 'x', include: ['a{b'] }), 'INVALID_GLOB')
  t.equal(await code({ pattern: 'foo(', literal: true }), 'ok')
  const err = await fx.search.search({ pattern: 'foo(' }, { offset: 0, pageSize: 10 }).catch(e => e as Error)
  t.notMatch(String((err as Error).message), fx.base, 'no absolute path in the message')
})

t.test('paths: outside, escaping links and FIFOs are refused; the canary never appears', async (t) => {
  const fx = await fixture(t)
  const code = (p: string) => toolCodeOf(fx.search.search({ pattern: 'secret', path: p }, { offset: 0, pageSize: 10 }))

  t.equal(await code('../outside'), 'PATH_OUTSIDE_ROOT')
  t.equal(await code(fx.outside), 'PATH_OUTSIDE_ROOT')
  t.equal(await code('link-to-outside-dir'), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await code('link-to-secret'), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await code('link-to-evil'), 'SYMLINK_ESCAPES_ROOT')
  if (fx.hasFifo) t.equal(await code('fifo'), 'NOT_A_REGULAR_FILE')
  t.equal(await code('nope/missing'), 'PATH_NOT_FOUND')

  for (const pattern of ['CANARY', 'secret', 'evil', 'inner', '.']) {
    for (const mode of ['content', 'files', 'count'] as const) {
      const page = await fx.search.search({ pattern, mode }, { offset: 0, pageSize: 100 })
      t.notMatch(JSON.stringify(page), fx.canary, `${pattern} ${mode}`)
      t.notMatch(JSON.stringify(page), fx.base, 'no absolute paths')
    }
  }
})

t.test('gitignore respected, hidden files opt-in by path, odd names shown consistently, long lines cut', async (t) => {
  const fx = await fixture(t)
  const paths = async (request: SearchRequest): Promise<string[]> =>
    (await fx.search.search({ ...request, mode: 'files' }, { offset: 0, pageSize: 100 })).files.map(f => f.path)

  t.strictSame(await paths({ pattern: 'ignored log|console|temp|notes|module.exports' }), [])
  t.strictSame(await paths({ pattern: 'HIDDEN' }), [])
  t.strictSame(await paths({ pattern: 'HIDDEN', path: '.env' }), ['.env'])
  t.strictSame(await paths({ pattern: 'bytes name' }), ['bad-\\xff\\xfe.txt'])
  t.strictSame(await paths({ pattern: 'dash' }), ['-dash.txt'])
  t.strictSame(await paths({ pattern: 'helper', path: 'link-inside-dir' }), ['src/index.ts', 'src/util/helpers.test.ts', 'src/util/helpers.ts'])

  const long = await fx.search.search({ pattern: 'y{10}' }, { offset: 0, pageSize: 10 })
  t.equal(long.content.length, 1)
  t.equal(long.content[0].hit.text.length, 2000)
  t.equal(long.content[0].hit.length, 5000)
})

t.test('a minified line longer than a pipe chunk is cut around its match', async (t) => {
  const fx = await fixture(t)
  fs.writeFileSync(path.join(fx.root, 'min.js'), 'a'.repeat(200_000) + 'needle' + 'b'.repeat(200_000) + '\n')

  const page = await fx.search.search({ pattern: 'needle' }, { offset: 0, pageSize: 10 })

  t.equal(page.content.length, 1)
  const hit = page.content[0].hit
  t.equal(hit.length, 400_006)
  t.equal(hit.text.length, 2000)
  t.ok(hit.start > 0 && hit.text.includes('needle'), 'the kept window shows the match')
})

t.test('context lines come with each match', async (t) => {
  const fx = await fixture(t)

  const page = await fx.search.search({ pattern: 'line three', contextLines: 1 }, { offset: 0, pageSize: 10 })

  t.equal(page.content.length, 1)
  t.strictSame(page.content[0].context.map(l => [l.line, l.text, l.match]), [[2, '', false], [4, 'line four', false]])
})

/** A stand-in ripgrep that prints `lines` match events and then sleeps. */
const fakeRg = (dir: string, lines: number): string =>
  scriptRg(dir, 'fake-rg.sh', `case "$*" in *--count*) ${lines > 0 ? countRecord('./a.txt', lines) : ':'}; exec sleep 30;; esac
printf '%s\\n' '${beginEvent('./a.txt')}'
i=0; while [ $i -lt ${lines} ]; do printf '%s\\n' '${matchEvent('./a.txt')}'; i=$((i+1)); done\nexec sleep 30`)

/** A stand-in ripgrep that prints `counts` for the counting pass, `lines` for any other, and exits. */
const printingRg = (dir: string, name: string, counts: Array<[string, number]>, lines: string[]): string =>
  scriptRg(dir, name, `case "$*" in *--count*) ${counts.map(([file, n]) => countRecord(file, n)).join('; ')}; exit 0;; esac\ncat <<'EOF'\n${lines.join('\n')}\nEOF`)

/** The pid of the one ripgrep `search` is running, once it runs. */
async function runningPid (search: { activePids(): number[] }): Promise<number> {
  await waitUntil(() => search.activePids().length > 0, 'ripgrep to run')
  return search.activePids()[0]
}

/** Whether process `pid` still exists (signal 0 only asks). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

t.test('cancellation kills ripgrep', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: fakeRg(fx.base, 0) })
  const controller = new AbortController()

  const pending = search.search({ pattern: 'x' }, { offset: 0, pageSize: 10, signal: controller.signal }).catch(e => e as Error)
  const pid = await runningPid(search)
  t.ok(pid > 0, 'ripgrep is running')
  controller.abort(new Error('client cancelled'))
  const result = await pending

  t.match(result, { message: 'client cancelled' })
  t.strictSame(search.activePids(), [])
  await waitUntil(() => !alive(pid), 'the killed ripgrep to be gone')
  t.equal(alive(pid), false, 'the child process is gone')
})

t.test('close() kills the searches still running (the bins call it on exit) and they fail as unfinished', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: fakeRg(fx.base, 0) })
  const pending = search.search({ pattern: 'x' }, { offset: 0, pageSize: 10 }).catch(e => e as Error)
  t.ok(await runningPid(search) > 0, 'ripgrep is running')
  t.equal(search.activePids().length, 1)

  search.close()

  t.match(await pending, { toolCode: 'SEARCH_FAILED', message: /killed by SIGKILL.*"no matches" cannot be told/ })
  t.strictSame(search.activePids(), [], 'nothing left running')
})

t.test('files that keep failing the re-check page after page: the re-check stops after 8 rounds and shows the page without them', async (t) => {
  const fx = await hostileServices(t, { big: false })
  // A stand-in that reports 12 files which are not there (as when the tree is being emptied under the server).
  const names = Array.from({ length: 12 }, (_, i) => `./gone-${String(i).padStart(2, '0')}.txt`)
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: printingRg(fx.base, 'vanishing-rg.sh', names.map(n => [n, 1]), [...names.flatMap(n => [beginEvent(n), matchEvent(n), endEvent(n)]), '{"type":"summary","data":{}}']) })

  const page = await search.search({ pattern: 'hit' }, { offset: 0, pageSize: 1 })

  t.strictSame(page.content, [], 'none of the vanished files is shown')
  t.equal(page.total, 3, 'nine rounds dropped nine files; the three never paged stay counted')
})

t.test('a line on ripgrep\'s stdout that is not its JSON is skipped; the matches around it stand', async (t) => {
  const fx = await hostileServices(t, { big: false })
  fs.writeFileSync(path.join(fx.root, 'a.txt'), 'hit\n')
  const lines = [beginEvent('./a.txt'), '{"type":"match","data":', 'not json at all', matchEvent('./a.txt'), endEvent('./a.txt'), '{"type":"summary","data":{}}']
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: printingRg(fx.base, 'noisy-rg.sh', [['./a.txt', 1]], lines) })

  const page = await search.search({ pattern: 'hit' }, { offset: 0, pageSize: 10 })

  t.equal(page.total, 1)
  t.match(page.content, [{ path: 'a.txt', hit: { line: 1, text: 'hit' } }])
})

t.test('a search past its deadline returns partial results with a notice', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: fakeRg(fx.base, 3), timeoutMs: 300 })
  // Results are re-checked before they are shown: the file the fake names must exist.
  fs.writeFileSync(path.join(fx.root, 'a.txt'), 'hit\n')

  const page: SearchPage = await search.search({ pattern: 'hit' }, { offset: 0, pageSize: 10 })

  t.equal(page.total, 3)
  t.equal(page.totalIsLowerBound, true)
  t.match(page.notices.join('\n'), /partial/)
  t.strictSame(search.activePids(), [])
})
