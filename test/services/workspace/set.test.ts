import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import '../../helpers/property.js'
import pino from 'pino'
import t from 'tap'
import { createLimiter } from '../../../src/services/limiter.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { createWorkspaceSet } from '../../../src/services/workspace/set.js'
import { threeRoots } from '../../helpers/roots.js'
import { toolCodeOf } from '../../helpers/workspace-fixture.js'

// Several roots served as one workspace: `name:` picks the root, no prefix is the first one, '.' is all
// of them. Each root is its own jail, so a link from one root into another is outside, like any other.

t.test('a path picks its root by name; without one it is in the first root; "." is every root', async (t) => {
  const { services: { workspace }, docs } = await threeRoots(t)
  t.same(workspace.roots.map(r => r.name), ['app', 'docs', 'plain'])
  t.match(await workspace.resolve('docs:guide/intro.md'), { relative: 'docs:guide/intro.md', requested: 'docs:guide/intro.md', base: 'docs:guide/intro.md/' })
  t.match(await workspace.resolve('docs:/guide'), { relative: 'docs:guide', base: 'docs:guide/' }, 'a slash after the prefix changes nothing')
  t.match(await workspace.resolve('docs:'), { relative: 'docs:', base: 'docs:' })
  t.match(await workspace.resolve('src/upload.ts'), { relative: 'app:src/upload.ts' }, 'no prefix: the first root')
  t.match(await workspace.resolve('app:a:b.txt'), { relative: 'app:a:b.txt' }, 'a first-root name with a colon, after its root')
  t.match(await workspace.resolve(path.join(docs, 'README.md')), { relative: 'docs:README.md' }, 'an absolute path in a root')
  t.match(await workspace.resolve(pathToFileURL(path.join(docs, 'guide')).href), { relative: 'docs:guide' }, 'a file:// URL in a root')
  t.match(await workspace.resolve('.'), { relative: '.', base: '' })
  t.same(workspace.parts(await workspace.resolve('.')).map(p => [p.resolved.relative, p.path]), [['app:', '.'], ['docs:', '.'], ['plain:', '.']])
  t.same(workspace.parts(await workspace.resolve('docs:guide')).map(p => p.path), ['guide'])
  t.match(workspace.lexical('docs:gone/file.md'), { relative: 'docs:gone/file.md', root: 'docs' }, 'history paths need not exist')
  t.match(workspace.lexical('.'), { relative: 'app:', root: 'app' })
  // A file's facts come with its open descriptor: the caller closes it (a dropped one is closed only by the GC).
  const readme = await workspace.inspect('docs:README.md')
  await readme.handle?.close()
  t.match(readme, { relative: 'docs:README.md', kind: 'file' })
  t.match(await workspace.inspect('.'), { relative: 'app:', kind: 'dir' }, 'the top described by the first root')
  t.equal((await workspace.stat(await workspace.resolve('.'))).isDirectory(), true)
  t.equal(await workspace.readText('docs:README.md'), '# Docs\n')
})

t.test('an unknown root is an error listing the roots; a prefix never leaves its root', async (t) => {
  const { services: { workspace }, base } = await threeRoots(t)
  const unknown = await workspace.resolve('wiki:page.md', { field: 'files[0].path' }).catch((e: Error) => e)
  t.match(unknown, { toolCode: 'UNKNOWN_ROOT', message: /files\[0\]\.path: "wiki:" names no served root \(the roots are "app:", "docs:", "plain:"\)/ })
  t.match(unknown, { message: /"app:wiki:…"/ }, 'and how to name a first-root file that holds a colon')
  t.equal(await toolCodeOf(workspace.resolve('docs:../app/README.md')), 'PATH_OUTSIDE_ROOT', 'a root\'s "..": outside, though another root is there')
  t.equal(await toolCodeOf(workspace.resolve('docs:to-app')), 'SYMLINK_ESCAPES_ROOT', 'a link into another root is outside its own')
  t.equal(await toolCodeOf(workspace.resolve('docs:to-secret')), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await toolCodeOf(workspace.resolve(path.join(base, 'outside', 'secret.txt'))), 'PATH_OUTSIDE_ROOT', 'an absolute path in no root')
  t.equal(await toolCodeOf(workspace.resolve('file://host%zz/x')), 'INVALID_PATH', 'a URL that does not parse')
  t.equal(await toolCodeOf(workspace.resolve(42 as unknown as string)), 'INVALID_PATH')
  const missing = await workspace.resolve('docs:guide/intro.mdx').catch((e: Error) => e)
  t.match(missing, { toolCode: 'PATH_NOT_FOUND', message: /"docs:guide\/intro\.mdx" does not exist.*did you mean: docs:guide\/intro\.md\?/ }, 'suggestions carry the root')
})

t.test('listing the top lists the roots; links, ignore rules and their files are told per root', async (t) => {
  const { services: { workspace } } = await threeRoots(t)
  const top = await workspace.readDirectory(await workspace.resolve('.'))
  t.same(top.map(e => [e.name, e.relative, e.kind]), [['app:', 'app:', 'dir'], ['docs:', 'docs:', 'dir'], ['plain:', 'plain:', 'dir']])
  const docs = await workspace.readDirectory(await workspace.resolve('docs:'))
  t.same(docs.map(e => e.relative).sort(), ['docs:.git', 'docs:README.md', 'docs:guide', 'docs:to-app', 'docs:to-secret'])
  const link = docs.find(e => e.name === 'to-app')
  t.same(await workspace.linkTarget(link as typeof docs[number]), { state: 'outside' })
  t.equal(await workspace.isIgnored('.', true), false, 'the top is never ignored')
  t.equal(await workspace.isIgnoredEntry('.', 'app:', true), false)
  t.equal(await workspace.isIgnored('app:build', true), true)
  t.equal(await workspace.isIgnoredEntry('app:', 'build', true), true)
  t.same(await workspace.explainIgnored('app:build/out.js', false), { where: 'app:.gitignore:1', pattern: 'build/' })

  const walked = await workspace.walk({ start: await workspace.resolve('.'), maxDepth: 3, includeHidden: false, respectGitignore: true, maxEntries: 100 })
  t.same(walked.entries.map(e => e.relative), ['app:', 'app:README.md', 'app:a:b.txt', 'app:src', 'app:src/upload.ts', 'docs:', 'docs:README.md', 'docs:guide', 'docs:guide/intro.md', 'docs:to-app', 'docs:to-secret', 'plain:', 'plain:notes.txt'])
  t.match(walked.firstIgnoredDir, { relative: 'app:build' })
  const below = await workspace.walk({ start: await workspace.resolve('docs:guide'), maxDepth: 1, includeHidden: false, respectGitignore: true, maxEntries: 100 })
  t.same(below.entries.map(e => e.relative), ['docs:guide/intro.md'])
})

t.test('files of any root open, pin and read through their own jail', async (t) => {
  const { services: { workspace } } = await threeRoots(t)
  const file = await workspace.resolve('plain:notes.txt')
  const handle = await workspace.openFile(file)
  t.teardown(() => handle.close())
  const sniff = await workspace.sniff(handle)
  const size = (await workspace.stat(file)).size
  t.match(await workspace.readLines(handle, size, sniff, { start: 1, maxLines: 10 }), { lines: ['plain needle'] })
  t.equal(await workspace.countLines(handle, size), 1)
  const pinned = await workspace.pin(file)
  t.equal(pinned.isDirectory, false)
  await pinned.close()
  t.equal(await toolCodeOf(workspace.openFile(await workspace.resolve('.'))), 'IS_A_DIRECTORY')
  t.equal(workspace.fsError(Object.assign(new Error('x'), { code: 'EACCES' }), 'docs:README.md').toolCode, 'PERMISSION_DENIED')
  t.equal(workspace.pdf, (await workspace.parts(await workspace.resolve('.')))[1].workspace.pdf, 'one PDF reader for every root')
})

t.test('one root is served as itself; nested roots send an absolute path to the innermost', async (t) => {
  const { app, docs } = await threeRoots(t)
  const log = pino({ level: 'silent' })
  const limiter = createLimiter()
  const only = await createWorkspace({ root: app, log })
  t.equal(createWorkspaceSet([only], limiter), only)

  const inner = path.join(app, 'src')
  const set = createWorkspaceSet([
    await createWorkspace({ root: app, log, prefixed: true }),
    await createWorkspace({ root: inner, log, prefixed: true }),
    await createWorkspace({ root: docs, name: 'manual', log, prefixed: true })
  ], limiter)
  t.match(await set.resolve(path.join(inner, 'upload.ts')), { relative: 'src:upload.ts' })
  t.match(await set.resolve(path.join(app, 'README.md')), { relative: 'app:README.md' })
  t.match(await set.resolve('app:src/upload.ts'), { relative: 'app:src/upload.ts' }, 'still reachable from the outer root by name')
  t.match(await set.resolve('manual:README.md'), { relative: 'manual:README.md' }, 'a given name is the prefix')
})

t.test('property: whatever path an agent sends, what resolves is inside the root its display path names', async (t) => {
  const { services: { workspace }, app, docs, plain, base } = await threeRoots(t)
  const byName: Record<string, string> = { app, docs, plain }
  const segment = fc.constantFrom('..', '.', '', 'src', 'guide', 'to-app', 'to-secret', 'build', 'README.md', 'a:b.txt', '%2e%2e', '\\x2e\\x2e', 'docs:', 'app:..', '/', 'outside')
  const prefix = fc.constantFrom('', 'app:', 'docs:', 'plain:', 'docs:/', 'wiki:', '/', 'file://', `${docs}/`, `${app}/`, `${base}/`)
  let resolvedCount = 0
  await fc.assert(fc.asyncProperty(prefix, fc.array(segment, { maxLength: 6 }), async (head, parts) => {
    const input = head + parts.join('/')
    const resolved = await workspace.resolve(input, { mustExist: false }).catch(() => undefined)
    if (resolved === undefined || resolved.relative === '.') return true
    resolvedCount++
    const name = /^([^:]+):/.exec(resolved.relative)?.[1] as string
    const real = Buffer.isBuffer(resolved.fsPath) ? resolved.fsPath.toString('latin1') : resolved.fsPath
    return real === byName[name] || real.startsWith(`${byName[name]}/`)
  }), { numRuns: 400 })
  t.ok(resolvedCount > 50, `${resolvedCount} of the paths resolved, each inside the root it names`)
})
