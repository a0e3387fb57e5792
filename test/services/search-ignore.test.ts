import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { createSearch } from '../../src/services/search.js'
import { rebaseRule } from '../../src/services/search-ignore.js'
import { hostileServices } from '../helpers/workspace-fixture.js'

t.test('gitignore lines are rebased onto the root', async (t) => {
  t.equal(rebaseRule('b.txt', '.'), 'b.txt')
  t.equal(rebaseRule('/top.txt', '.'), '/top.txt')
  t.equal(rebaseRule('c.txt', 'src'), '/src/**/c.txt')
  t.equal(rebaseRule('/c.txt', 'src'), '/src/c.txt')
  t.equal(rebaseRule('gen/out.js', 'src/a'), '/src/a/gen/out.js')
  t.equal(rebaseRule('!keep.log', 'src'), '!/src/**/keep.log')
  t.equal(rebaseRule('build/', 'src'), '/src/**/build/')
  t.equal(rebaseRule('# comment', 'src'), undefined)
  t.equal(rebaseRule('   ', 'src'), undefined)
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
