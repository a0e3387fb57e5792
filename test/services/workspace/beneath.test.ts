import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { isOutside, walkBeneath } from '../../../src/services/workspace/beneath.js'

// The component walk beneath the root: link texts are judged before they are followed.

t.test('isOutside reads path.relative output, never a string prefix', async (t) => {
  t.equal(isOutside('..'), true)
  t.equal(isOutside('../x'), true)
  t.equal(isOutside('/abs'), true)
  t.equal(isOutside('..x'), false, 'a name that starts with two dots is inside')
  t.equal(isOutside('a/../b'), false)
  t.equal(isOutside(''), false)
})

t.test('link texts with empty and "." components, and absolute links inside the root, resolve inside', async (t) => {
  const root = fs.realpathSync(t.testdir({ src: { 'index.ts': 'x' } }))
  fs.symlinkSync('./src//index.ts', path.join(root, 'dotted'))
  fs.symlinkSync(path.join(root, 'src'), path.join(root, 'abs-inside'))

  const dotted = await walkBeneath(root, ['dotted'], true)
  const absolute = await walkBeneath(root, ['abs-inside', 'index.ts'], true)

  t.match(dotted, { state: 'found', real: path.join(root, 'src', 'index.ts') })
  t.match(absolute, { state: 'found', real: path.join(root, 'src', 'index.ts') })
})

t.test('a link replaced between its lstat and its readlink is an error, not a guess', async (t) => {
  const root = fs.realpathSync(t.testdir({ target: 'x' }))
  fs.symlinkSync('target', path.join(root, 'flaky'))
  const { walkBeneath: racingWalk } = await t.mockImport<typeof import('../../../src/services/workspace/beneath.js')>('../../../src/services/workspace/beneath.js', {
    'node:fs/promises': {
      ...await import('node:fs/promises'),
      // What readlink(2) answers when the link became a regular file after lstat saw it.
      readlink: async () => { throw Object.assign(new Error('EINVAL'), { code: 'EINVAL' }) }
    }
  })

  t.same(await racingWalk(root, ['flaky'], true), { state: 'error', code: 'EINVAL' })
})
