import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { rgPath } from '@vscode/ripgrep'
import { createSearch } from '../../../src/services/search/search.js'
import { rebaseRule } from '../../../src/services/search/ignore.js'
import { hostileServices } from '../../helpers/workspace-fixture.js'

t.test('gitignore lines of an ancestor are rebased onto the searched folder', async (t) => {
  const rebased = (line: string, dir: string, target: string): string[] => rebaseRule(line, dir, target).sort()
  t.strictSame(rebased('b.txt', '.', 'src'), ['b.txt'], 'an unanchored name applies at any depth')
  t.strictSame(rebased('!keep.log', 'src', 'src/a'), ['!keep.log'])
  t.strictSame(rebased('build/', '.', 'src'), ['build/'])
  t.strictSame(rebased('/top.txt', '.', 'src'), [], 'anchored in the root, it names nothing inside src')
  t.strictSame(rebased('/src/top.txt', '.', 'src'), ['/top.txt'])
  t.strictSame(rebased('deep/c.txt', 'src', 'src/deep'), ['/c.txt'])
  t.strictSame(rebased('deep/c.txt', 'src', 'src/other'), [])
  t.strictSame(rebased('*/gen/', '.', 'src'), ['/gen/'], 'a glob component is matched against the folder names')
  t.strictSame(rebased('s?c/[a-z]*/x', '.', 'src/deep'), ['/x'])
  t.strictSame(rebased('**/gen/x', '.', 'a/gen'), ['/**/gen/x', '/x'], '** may end above or inside the folder')
  t.strictSame(rebased('a/**', '.', 'a/b'), ['/**'], 'everything inside')
  t.strictSame(rebased('/src', '.', 'src'), [], 'a rule naming the searched folder itself selects nothing inside (ripgrep searches a named folder)')
  t.strictSame(rebased('/src/', '.', 'src/deep'), [])
  t.strictSame(rebased('# comment', 'src', 'src/a'), [])
  t.strictSame(rebased('   ', 'src', 'src/a'), [])
  t.strictSame(rebased('/', '.', 'src'), [])
})

t.test('a line of many ** costs states, not paths: each (pattern, folder) position is visited once', { timeout: 20000 }, async (t) => {
  const deep = Array.from({ length: 12 }, (_, i) => `d${i}`).join('/')
  // On the old recursion, 16 `**` under a folder 12 deep took 8 s and 20 took a minute; this one would not end.
  const stars = '/' + '**/'.repeat(100_000) + 'x'
  t.same(rebaseRule(stars, '.', deep), ['/**/x'], 'consecutive ** are one')

  // Distinct alternatives are capped (one per number of `d*` the folders above consume, here up to 70).
  const deeper = Array.from({ length: 70 }, (_, i) => `d${i}`).join('/')
  const out = rebaseRule('/' + 'd*/**/'.repeat(100_000) + 'x', '.', deeper)
  t.equal(out.length, 64)
  t.equal(new Set(out).size, 64)
  t.ok(out.every(rule => rule.startsWith('/') && rule.endsWith('/x')))
})

t.test('ripgrep matches --ignore-file globs relative to its cwd (not to the ignore file\'s folder)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsmcp-rgcwd-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  for (const f of ['top.txt', 'deep/top.txt', 'deep/gen/x.txt', 'keep.txt']) {
    fs.mkdirSync(path.dirname(path.join(dir, 'tree', f)), { recursive: true })
    fs.writeFileSync(path.join(dir, 'tree', f), 'zzz\n')
  }
  const rules = path.join(dir, 'rules')
  fs.writeFileSync(rules, '/top.txt\n/deep/gen/\n')
  const out = execFileSync(rgPath, ['--no-config', '--ignore-file', rules, '-l', 'zzz', '.'], { cwd: path.join(dir, 'tree') }).toString()
  t.strictSame(out.trim().split('\n').sort(), ['./deep/top.txt', './keep.txt'])
})

t.test('rules of the root and of folders between it and the search path apply; rules above the root do not', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log: pino({ level: 'silent' }) })
  t.teardown(() => search.close())
  fs.writeFileSync(path.join(fx.base, '.gitignore'), 'root/src/\n*.ts\n*.md\n')
  fs.mkdirSync(path.join(fx.root, 'src', 'deep', 'gen'), { recursive: true })
  fs.writeFileSync(path.join(fx.root, 'src', '.gitignore'), 'gen/\n/top.txt\n')
  for (const f of ['src/x.secret', 'src/deep/gen/out.txt', 'src/deep/top.txt', 'src/top.txt', 'src/deep/ok.txt']) {
    fs.writeFileSync(path.join(fx.root, f), 'zzz\n')
  }
  const files = async (p: string, pattern = 'zzz'): Promise<string[]> =>
    (await search.search({ pattern, path: p, mode: 'files' }, { offset: 0, pageSize: 100 })).files.map(f => f.path)

  t.strictSame(await files('.'), ['src/deep/ok.txt', 'src/deep/top.txt'])
  t.strictSame(await files('src'), ['src/deep/ok.txt', 'src/deep/top.txt'])
  t.strictSame(await files('src/deep'), ['src/deep/ok.txt', 'src/deep/top.txt'])
  t.strictSame(await files('src/deep/gen/out.txt'), ['src/deep/gen/out.txt'], 'a file named in path is searched')
  t.strictSame(await files('.', 'helper'), ['src/index.ts', 'src/util/helpers.test.ts', 'src/util/helpers.ts'])
  t.strictSame(await files('src', 'Fixture'), [])
  t.strictSame(await files('.', 'Fixture'), ['README.md'])
})

t.test('anchored ancestor rules reach into the searched folder; a rule file linked outside the root is not read', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log: pino({ level: 'silent' }) })
  t.teardown(() => search.close())
  fs.mkdirSync(path.join(fx.root, 'pkg', 'lib', 'gen'), { recursive: true })
  fs.writeFileSync(path.join(fx.root, 'pkg', '.gitignore'), '/lib/gen/\n*/top.txt\n')
  for (const f of ['pkg/lib/gen/out.txt', 'pkg/lib/top.txt', 'pkg/lib/ok.txt', 'pkg/lib/linked-rule.txt']) fs.writeFileSync(path.join(fx.root, f), 'qqq\n')
  // An ancestor's rule file that is a link to the outside: its rules (which would hide linked-rule.txt) never apply.
  fs.writeFileSync(path.join(fx.outside, 'rules'), 'linked-rule.txt\n')
  fs.symlinkSync(path.join(fx.outside, 'rules'), path.join(fx.root, 'pkg', '.ignore'))
  const files = async (p: string): Promise<string[]> =>
    (await search.search({ pattern: 'qqq', path: p, mode: 'files' }, { offset: 0, pageSize: 100 })).files.map(f => f.path)

  // Searching pkg itself, ripgrep reads pkg's own rule files (a limit: see the README's security model).
  const inPkg = await files('pkg')
  t.ok(inPkg.includes('pkg/lib/ok.txt') && !inPkg.includes('pkg/lib/top.txt') && !inPkg.includes('pkg/lib/gen/out.txt'), inPkg.join())
  t.strictSame(await files('pkg/lib'), ['pkg/lib/linked-rule.txt', 'pkg/lib/ok.txt'], 'ancestor rules are rebased; the linked one is not read')
  t.strictSame(await files('pkg/lib/gen/out.txt'), ['pkg/lib/gen/out.txt'])
})
