import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { recheckFiles } from '../../../src/services/search/recheck.js'
import { hostileServices } from '../../helpers/workspace-fixture.js'

// The re-check of files about to be shown, over a real tree changed after ripgrep named them: each
// kind of change gets its verdict, and an unchanged file none.

t.test('each change after the search gets its verdict; an unchanged file none', async (t) => {
  const fx = await hostileServices(t, { big: false })
  // A folder now a link to another folder inside: the name resolves elsewhere.
  fs.mkdirSync(path.join(fx.root, 'lib'))
  fs.writeFileSync(path.join(fx.root, 'lib', 'app.ts'), 'export {}\n')
  fs.renameSync(path.join(fx.root, 'src'), path.join(fx.root, 'src-old'))
  fs.symlinkSync('lib', path.join(fx.root, 'src'))
  // A file now a folder, a file removed, a file now hard-linked.
  fs.rmSync(path.join(fx.root, 'README.md'))
  fs.mkdirSync(path.join(fx.root, 'README.md'))
  fs.rmSync(path.join(fx.root, 'empty.txt'))
  fs.linkSync(path.join(fx.root, 'crlf.txt'), path.join(fx.root, 'crlf-twin.txt'))

  const verdicts = await recheckFiles(fx.workspace, ['src/app.ts', 'README.md', 'empty.txt', 'crlf.txt', 'docs/guide.md', 'docs/guide.md'])

  t.same(Object.fromEntries([...verdicts].sort()), {
    'README.md': 'moved',
    'crlf.txt': 'hardLinked',
    'empty.txt': 'moved',
    'src/app.ts': 'moved'
  })
  t.notOk(verdicts.has('docs/guide.md'), 'unchanged, and looked at once')
})
