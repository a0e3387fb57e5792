import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import pino from 'pino'
import t from 'tap'
import { MAX_CLIENT_ROOTS, narrowServices } from '../../src/services/client-roots.js'
import { gitLog } from '../../src/tools/git-log.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { threeRoots } from '../helpers/roots.js'
import { textOf, toolCodeOf, toolContext } from '../helpers/workspace-fixture.js'

// A session's client roots narrow what it is served, never widen it: a served root inside a client root
// stays whole, a client root inside a served root narrows it to that folder (through the root's jail),
// and client roots that meet no served root are ignored (a remote client's folders are not on this machine).

const options = { log: pino({ level: 'silent' }), allowHardLinks: false }
const url = (p: string): string => pathToFileURL(p).href

t.test('one client root at a served root: that root alone, served as a single root, with its history', async (t) => {
  const { services, docs } = await threeRoots(t)
  const narrowed = await narrowServices(services, [url(docs)], options)
  if (narrowed?.workspace === undefined || narrowed.search === undefined || narrowed.git === undefined) throw new Error('narrowed')
  t.same(narrowed.workspace.roots.map(r => r.name), ['docs'])
  t.match(await narrowed.workspace.resolve('guide/intro.md'), { relative: 'guide/intro.md' }, 'one root: no prefix')
  t.equal(await toolCodeOf(narrowed.workspace.resolve('app:README.md')), 'PATH_NOT_FOUND', 'the other roots are gone (app:README.md is just a name here)')
  t.match(textOf(await searchRegex.run({ search: narrowed.search, tokenizer: services.tokenizer, pattern: 'needle' }, toolContext())), /1 matching line in 1 file for \/needle\/\n\n## guide\/intro\.md\n/)
  t.same(narrowed.search.limits, services.search.limits, 'the same limits')
  t.equal(await narrowed.search.engine(), await services.search.engine(), 'one engine probe')
  t.same(narrowed.git.names, ['docs'])
  t.match(textOf(await gitLog.run({ workspace: narrowed.workspace, git: narrowed.git, tokenizer: services.tokenizer, path: 'guide' }, toolContext())), /Start the docs/)
  t.equal(narrowed.tokenizer, services.tokenizer, 'the other services are shared')
})

t.test('a client root inside a served root narrows it to that folder, jailed there; several stay prefixed', async (t) => {
  const { services, app, plain } = await threeRoots(t)
  fs.mkdirSync(path.join(app, 'lib'))
  const narrowed = await narrowServices(services, [url(path.join(app, 'src')), url(path.join(app, 'lib')), url(plain), 'https://example.com/repo', 42, 'file://host%zz/x'], options)
  if (narrowed?.workspace === undefined || narrowed.git === undefined) throw new Error('narrowed')
  t.same(narrowed.workspace.roots.map(r => r.name), ['app', 'app-2', 'plain'])
  t.match(await narrowed.workspace.resolve('app:upload.ts'), { relative: 'app:upload.ts' })
  t.equal(await toolCodeOf(narrowed.workspace.resolve('app:../README.md')), 'PATH_OUTSIDE_ROOT', 'the rest of the served root is outside now')
  const history = await Promise.resolve(gitLog.run({ workspace: narrowed.workspace, git: narrowed.git, tokenizer: services.tokenizer, path: 'app:upload.ts' }, toolContext())).catch((e: Error) => e)
  t.match(history, { toolCode: 'NOT_A_REPOSITORY', message: /narrowed this root to a folder inside it.*Hint: no root of this session is a git repository/ })
})

t.test('roots that keep everything, or meet no served root, or lead out through a link, narrow nothing', async (t) => {
  const { services, base, docs, app } = await threeRoots(t)
  t.equal(await narrowServices(services, [url(base)], options), undefined, 'a client root holding every served root')
  t.equal(await narrowServices(services, [url('/somewhere/else'), 'file:///'.slice(0, 5)], options), undefined, 'folders of another machine')
  t.equal(await narrowServices(services, [url(path.join(docs, 'to-secret')), url(path.join(app, 'README.md')), url(path.join(app, 'gone'))], options), undefined, 'a link out, a file, a missing folder')
  t.equal(await narrowServices(services, [], options), undefined)
  const flood = [...Array.from({ length: MAX_CLIENT_ROOTS }, (_, i) => url(`/elsewhere/${i}`)), url(docs)]
  t.equal(await narrowServices(services, flood, options), undefined, `only the first ${MAX_CLIENT_ROOTS} client roots are looked at`)
  t.equal(await narrowServices(services, [url(path.join(app, 'src', '..', '..', 'outside'))], options), undefined, 'a ".." in a client root is resolved as text first')
  const { git: _git, ...withoutGit } = services
  const narrowed = await narrowServices(withoutGit, [url(docs)], options)
  t.equal(narrowed?.git, undefined, 'no history served, none narrowed')
})
