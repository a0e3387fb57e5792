import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import pino from 'pino'
import { rgPath } from '@vscode/ripgrep'
import { createSearch, type CreateSearchOptions, type SearchPage } from '../../../src/services/search/search.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { scriptRg } from '../../helpers/stand-in-rg.js'

// A named file's page far into its matches is sought: a plain ripgrep run finds where its window starts, then
// ripgrep reads the file from there on its stdin. Every page must equal the page of a search that held every line
// (the reference), whether it was sought or — where seeking cannot be trusted — read from the file's start.

const log = pino({ level: 'silent' })

/** 3,000 lines, two of three matching: `NEEDLE <n>` or `hay <n>`, in `encode`'s bytes. */
const lines = Array.from({ length: 3000 }, (_, i) => i % 3 === 2 ? `hay ${i}` : `NEEDLE ${i} ${'.'.repeat(i % 7)}`)

/** Real ripgrep that writes each run's arguments to `log` first (and runs `extra` shell lines before it). */
function loggingRg (dir: string, extra = ''): { rg: string, runs: () => string[] } {
  const file = path.join(dir, 'runs.log')
  fs.writeFileSync(file, '')
  const rg = scriptRg(dir, 'logging-rg.sh', `printf '%s\\n' "$*" >> '${file}'\n${extra}\nexec '${rgPath}' "$@"`)
  return { rg, runs: () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) }
}

const sought = (runs: string[]): boolean => runs.some(r => r.endsWith('-- -'))

/** A fresh folder, removed after the test (a test here may need several). */
function tempDir (t: Test): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wsmcp-seek-')))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function fixture (t: Test, files: Record<string, string | Buffer>, extra: Partial<CreateSearchOptions> = {}, rgExtra = '') {
  const root = tempDir(t)
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(root, name), content)
  const workspace = await createWorkspace({ root, log })
  const { rg, runs } = loggingRg(tempDir(t), rgExtra)
  const search = await createSearch({ workspace, log, seekFrom: 0, rgPath: rg, timeoutMs: 60_000, ...extra })
  const held = await createSearch({ workspace, log, timeoutMs: 60_000 })
  t.teardown(() => { search.close(); held.close() })
  return { root, search, held, runs }
}

const shown = (page: SearchPage) => ({ total: page.total, items: page.content.map(i => ({ path: i.path, hit: i.hit, context: i.context })) })

t.test('a page far into a named file is sought, and equals the page of a search that held every line', async (t) => {
  // A line longer than ripgrep's records are held whole (1 MiB), among the matches the plain run passes.
  const long = [...lines.slice(0, 30), `NEEDLE ${'z'.repeat(1_200_000)}`, ...lines.slice(30, 100)].join('\n') + '\n'
  const fx = await fixture(t, { 'big.txt': lines.join('\n') + '\n', 'crlf.txt': lines.join('\r\n') + '\r\n', 'long.txt': long })
  const controller = new AbortController()

  for (const file of ['big.txt', 'crlf.txt', 'long.txt']) {
    for (const [offset, pageSize, contextLines] of file === 'long.txt' ? [[18, 5, 1], [30, 10, 2]] : [[0, 10, 0], [1000, 7, 2], [1990, 20, 3], [1995, 10, 1]]) {
      const request = { pattern: 'NEEDLE', path: file, contextLines }
      const page = await fx.search.search(request, { offset, pageSize, signal: controller.signal })
      t.same(shown(page), shown(await fx.held.search(request, { offset, pageSize })), `${file} at ${offset}, context ${contextLines}`)
    }
  }
  t.ok(sought(fx.runs()), 'ripgrep read the file on its stdin')
})

t.test('where seeking cannot be trusted the file is read from its start, with the same pages', async (t) => {
  const text = lines.join('\n') + '\n'
  // 40-byte lines put the NUL at ~100 KB: past what the plain run reads to find the window, inside what the window needs.
  const wide = lines.map(l => l.padEnd(40, '.'))
  const nulFar = [...wide.slice(0, 2500), 'x\u0000y', ...wide.slice(2500)].join('\n') + '\n'
  const cases: Array<[string, string | Buffer, number, number, boolean]> = [
    // [file, content, offset, page size, a stdin run may start]
    ['utf16.txt', Buffer.from('\ufeff' + text, 'utf16le'), 900, 10, false],
    ['utf8-bom.txt', '\ufeff' + text, 900, 10, false],
    ['latin1.txt', Buffer.from(lines.map(l => `${l} caf\u00e9`).join('\n') + '\n', 'latin1'), 900, 10, false],
    // A NUL byte before the window: ripgrep's plain output says "binary file matches" instead of lines.
    ['nul-near.txt', ['x\u0000y', ...lines].join('\n') + '\n', 900, 10, false],
    // A NUL byte past the first buffers, before the window: the plain run prints lines, then "binary file matches".
    ['nul-mid.txt', nulFar, 1900, 10, false],
    // A NUL byte inside the window, after where it starts: ripgrep reads NULs on its stdin differently.
    ['nul-far.txt', nulFar, 10, 1800, true]
  ]
  const fx = await fixture(t, Object.fromEntries(cases.map(([name, content]) => [name, content])))

  for (const [file, , offset, pageSize, stdin] of cases) {
    const before = fx.runs().length
    const request = { pattern: 'NEEDLE', path: file, contextLines: 1 }
    const page = await fx.search.search(request, { offset, pageSize })
    const reference = await fx.held.search(request, { offset, pageSize })
    t.ok(page.content.length > 0, `${file}: a page`)
    t.same(shown(page), shown(reference), file)
    // A stdin run given up at once may be killed before its wrapper logged it: only its absence is certain.
    if (!stdin) t.equal(sought(fx.runs().slice(before)), false, `${file}: no stdin run`)
  }
})

t.test('a file changed since it was counted: the sought page shows what is there now (nothing), and is stepped over', async (t) => {
  const fx = await fixture(t, { 'big.txt': lines.join('\n') + '\n' })

  const first = await fx.search.search({ pattern: 'NEEDLE', path: 'big.txt' }, { offset: 0, pageSize: 10 })
  fs.writeFileSync(path.join(fx.root, 'big.txt'), lines.slice(0, 30).join('\n') + '\n')
  const later = await fx.search.search({ pattern: 'NEEDLE', path: 'big.txt' }, { offset: 1500, pageSize: 10 })

  t.equal(first.total, 2000)
  t.equal(later.cached, true)
  t.same(later.content, [], 'the plain run found 20 matches, not 1,501: the file is read from its start, and has none there')
})

t.test('a failed locating run falls back to reading from the start; a failed stdin run is SEARCH_FAILED, a stopped one SHUTTING_DOWN', async (t) => {
  const killLocate = await fixture(t, { 'big.txt': lines.join('\n') + '\n' }, {}, 'case "$*" in *--byte-offset*) kill -KILL $$;; esac')
  const page = await killLocate.search.search({ pattern: 'NEEDLE', path: 'big.txt' }, { offset: 1200, pageSize: 5 })
  t.same(shown(page), shown(await killLocate.held.search({ pattern: 'NEEDLE', path: 'big.txt' }, { offset: 1200, pageSize: 5 })))

  const killStdin = await fixture(t, { 'big.txt': lines.join('\n') + '\n' }, {}, 'case "$*" in *"-- -") kill -KILL $$;; esac')
  await t.rejects(killStdin.search.search({ pattern: 'NEEDLE', path: 'big.txt' }, { offset: 1200, pageSize: 5 }), { toolCode: 'SEARCH_FAILED', message: /killed by SIGKILL/ })

  const marker = path.join(tempDir(t), 'stdin-run')
  const stopped = await fixture(t, { 'big.txt': lines.join('\n') + '\n' }, {}, `case "$*" in *"-- -") : > '${marker}'; exec sleep 30;; esac`)
  const pending = stopped.search.search({ pattern: 'NEEDLE', path: 'big.txt' }, { offset: 1200, pageSize: 5 }).then(() => 'answered', (err: Error) => err)
  while (!fs.existsSync(marker)) await new Promise(resolve => setTimeout(resolve, 5))
  stopped.search.windDown()
  t.match(await pending, { toolCode: 'SHUTTING_DOWN' })
})
