import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { loadConfig } from '../../src/base/config.js'
import { closeServices, createServices, type Services } from '../../src/services/index.js'
import { captureLogger } from '../helpers/engine.js'

// createServices: the production services for a config, with ripgrep optional.

t.test('without ripgrep the services come up without search, and the operator is told', async (t) => {
  const root = t.testdir({ 'a.txt': 'x' })
  const { log, lines } = captureLogger()

  const services = await createServices(loadConfig({ root, ripgrepPath: path.join(root, 'no-such-rg') }, {}), log)

  t.equal(services.search, undefined)
  t.ok(services.workspace !== undefined && services.tokenizer !== undefined)
  t.ok(lines.some(l => l.level === 40 && /ripgrep not available/.test(String(l.msg))))
  await services.tokenizer?.close()
})

t.test('with ripgrep every service is there', async (t) => {
  const root = t.testdir({ 'a.txt': 'x' })

  const services = await createServices(loadConfig({ root }, {}), pino({ level: 'silent' }))

  t.ok(services.search !== undefined)
  services.search?.close()
  await services.tokenizer?.close()
})

t.test('closeServices ends each service it finds, even when another fails to close; a set of none closes at once', async (t) => {
  const closed: string[] = []
  const closer = (name: string, fail = false) => ({ close: async () => { closed.push(name); if (fail) throw new Error(`${name} would not close`) } })
  const services = {
    search: { close: () => { closed.push('search') } },
    semantic: closer('semantic', true),
    codeIndex: closer('codeIndex'),
    tokenizer: closer('tokenizer'),
    symbols: closer('symbols'),
    workspace: { pdf: closer('pdf') }
  } as unknown as Services
  await closeServices(services)
  t.same(closed.sort(), ['codeIndex', 'pdf', 'search', 'semantic', 'symbols', 'tokenizer'])
  await t.resolves(closeServices({}))
})

t.test('what is not there says why: ripgrep, git, the parser and the index each give a code, a reason and a next step', async (t) => {
  const root = t.testdir({ 'a.txt': 'x' })
  const { log } = captureLogger()

  const plain = await createServices(loadConfig({ root, codeIndex: 'off', ripgrepPath: path.join(root, 'no-such-rg') }, {}), log)
  t.teardown(() => closeServices(plain))
  t.match(plain.absent, {
    search: { code: 'RIPGREP_NOT_FOUND', step: 'list-and-read' },
    git: { code: 'NOT_A_REPOSITORY', reason: /no \.git folder/, step: 'read-without-history' },
    codeIndex: { code: 'CODE_INDEX_OFF', reason: /--code-index off/, step: 'grep-for-definitions' }
  })
  t.equal(plain.absent?.symbols, undefined, 'the parser is installed here')

  // A machine without git, SQLite or tree-sitter: the packages' doors answer as they do when nothing loads.
  const { createServices: bare } = await t.mockImport<typeof import('../../src/services/index.js')>('../../src/services/index.js', {
    '../../src/services/git/index.js': { ...await import('../../src/services/git/index.js'), createGit: async () => 'git is not installed (no git on PATH)' },
    '../../src/services/symbols/index.js': { ...await import('../../src/services/symbols/index.js'), symbolParser: () => undefined },
    '../../src/services/code-index/index.js': { ...await import('../../src/services/code-index/index.js'), codeIndexService: () => undefined, semanticService: () => undefined }
  })
  const missing = await bare(loadConfig({ root }, {}), log)
  t.teardown(() => closeServices(missing))
  t.match(missing.absent, {
    git: { code: 'GIT_NOT_FOUND', reason: 'git is not installed (no git on PATH)' },
    symbols: { code: 'PARSER_NOT_INSTALLED' },
    codeIndex: { code: 'INDEX_UNAVAILABLE', reason: /SQLite or tree-sitter/ }
  })
})

t.test('why git is not there reaches tool answers without a server path: the root as ".", git\'s own path hidden; the log keeps them', async (t) => {
  const root = fs.realpathSync(t.testdir({ 'a.txt': 'x' }))
  const { log, lines } = captureLogger()
  const reasons = ['/opt/tools/git does not run: fatal: bad config line 1 in file /root/.gitconfig', `git does not accept the repository: fatal: detected dubious ownership in repository at '${root}'`]
  const absent = []
  for (const reason of reasons) {
    const { createServices: withGit } = await t.mockImport<typeof import('../../src/services/index.js')>('../../src/services/index.js', {
      '../../src/services/git/index.js': { ...await import('../../src/services/git/index.js'), createGit: async () => reason }
    })
    const services = await withGit(loadConfig({ root, codeIndex: 'off' }, {}), log)
    t.teardown(() => closeServices(services))
    absent.push(services.absent?.git)
  }

  t.match(absent, [
    { code: 'GIT_NOT_FOUND', reason: '(a server path) does not run: fatal: bad config line 1 in file (a server path)' },
    { code: 'NOT_A_REPOSITORY', reason: "git does not accept the repository: fatal: detected dubious ownership in repository at '.'" }
  ])
  t.match(lines.filter(l => l.msg === 'git history tools disabled').map(l => l.reason), reasons, 'the log line has them whole, for the operator')

  const other = `${root}-other`
  fs.mkdirSync(other)
  t.teardown(() => fs.rmSync(other, { recursive: true, force: true }))
  const { createServices: twoRoots } = await t.mockImport<typeof import('../../src/services/index.js')>('../../src/services/index.js', {
    '../../src/services/git/index.js': { ...await import('../../src/services/git/index.js'), createGit: async () => `git does not accept the repository at ${other}` }
  })
  const several = await twoRoots(loadConfig({ root: `docs=${other}`, roots: [root] }, {}), log)
  t.teardown(() => closeServices(several))
  t.match(several.absent?.git, { reason: 'git does not accept the repository at docs:' }, 'with several roots, a root by its name')
})
