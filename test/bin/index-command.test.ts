import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { EXIT_BUSY, indexReport, progressLogger, waitSecondsOf } from '../../src/bin/index-command.js'
import type { CodeIndexStatus } from '../../src/services/code-index/code-index.js'
import { acquireLease } from '../../src/services/code-index/index-lease.js'
import { buildAndPublish } from '../../src/services/code-index/index-publisher.js'
import { loadSqlite, type Sqlite } from '../../src/services/code-index/index-schema.js'
import { openIndexReader } from '../../src/services/code-index/index-reader.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { runCli } from '../helpers/cli.js'

// `workspace-mcp index`: builds the index once and publishes it for replicas (issue 29, item 3).

const log = pino({ level: 'silent' })
const sqlite = loadSqlite() as Sqlite
const where = locateTreeSitter() as TreeSitterLocation

const temp = (prefix: string): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}
const root = temp('wmcp-index-root-')
for (let i = 0; i < 30; i++) fs.writeFileSync(path.join(root, `m${i}.py`), `def handler_${i}(request):\n    return request\n`)

t.test('the command builds, publishes one whole file (no log, no lock, no staging left) and says what it holds, exit 0', async (t) => {
  const stateDir = temp('wmcp-index-state-')

  const run = await runCli(['index', '--root', root, '--state-dir', stateDir, '--log-level', 'warn'])
  const files = fs.readdirSync(stateDir)

  t.equal(run.status, 0, run.stderr)
  t.match(files, [/^index-[0-9a-f]{16}\.sqlite$/])
  t.equal(files.length, 1, 'nothing beside it')
  t.match(run.stdout, new RegExp(`^${path.join(stateDir, files[0])}: 30 source files, 30 chunks, 30 symbols \\(0\\.0 MB of source, 30 parsed, \\d+\\.\\d s\\)\\n$`))
  const reader = openIndexReader(sqlite, path.join(stateDir, files[0]), true)
  t.equal(reader?.findSymbols('handler_7', 'exact', undefined, undefined, 1).length, 1, 'readable as replicas read it (immutable)')
  reader?.close()

  // A state folder it cannot write: an index in a temporary file would be gone at exit, so none is built.
  const blocked = path.join(stateDir, 'a-file')
  fs.writeFileSync(blocked, '')
  const refused = await runCli(['index', '--root', root, '--state-dir', blocked, '--log-level', 'silent'])
  t.equal(refused.status, 2)
  t.match(refused.stderr, /--state-dir \/ WORKSPACE_MCP_STATE_DIR: .*a-file cannot be written, and an index in a temporary file would be gone at exit/)
})

t.test('a build waits for one holding the lease, and gives up after --wait; a failed build leaves the published index as it was', async (t) => {
  const published = path.join(temp('wmcp-index-pub-'), 'index-0123456789abcdef.sqlite')
  const workspace = await createWorkspace({ root, log })
  const build = async (options: { waitMs?: number, maxBytes?: number } = {}) => await buildAndPublish({ workspace, treeSitter: where, threads: 1, sqlite, published, log, waitMs: options.waitMs ?? 0, ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }), everyMs: 10, progress: () => {} })

  const first = await build()
  const held = acquireLease(published)
  const busy = await build({ waitMs: 200 })
  if ('release' in held) held.release()
  fs.writeFileSync(path.join(root, 'big.py'), Array.from({ length: 4000 }, (_, i) => `def filler_${i}(x):\n    return x + ${i}\n`).join(''))
  t.teardown(() => fs.rmSync(path.join(root, 'big.py'), { force: true }))
  const failed = await build({ maxBytes: 256 * 1024 })
  const reader = openIndexReader(sqlite, published, true)

  t.match(first, { outcome: 'published', status: { files: 30 } })
  t.match(busy, { outcome: 'busy', holder: { pid: process.pid } })
  t.match(failed, { outcome: 'failed', status: { state: 'unavailable', problem: { kind: 'size-limit' } } })
  t.equal(reader?.state().counts.files, 30, 'the published index is the first build\'s')
  t.same(fs.readdirSync(path.dirname(published)), [path.basename(published)], 'no staging file or lock left behind')
  reader?.close()
})

t.test('progress lines, as the build reports them', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const spy = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line)) } })

  progressLogger(spy)({ state: 'building', scanning: true, pending: 10, done: 4, failures: 0, files: 4, chunks: 4, symbols: 4 })

  t.match(lines, [{ done: 4, pending: 10, files: 4, msg: 'index: 4 of 10 changed files parsed' }])
})

t.test('what the command prints and its exit code, for each outcome', async (t) => {
  const status = (over: Partial<CodeIndexStatus>): CodeIndexStatus => ({ state: 'ready', scanning: false, pending: 3, done: 3, failures: 0, files: 3, chunks: 4, symbols: 5, ...over })

  t.same(indexReport({ outcome: 'published', status: status({}), ms: 1234 }, '/s/index.sqlite', 600), { stdout: '/s/index.sqlite: 3 source files, 4 chunks, 5 symbols (3 parsed, 1.2 s)\n', stderr: '', exitCode: 0 })
  t.match(indexReport({ outcome: 'published', status: status({ files: 0 }), ms: 1 }, '/s/i', 600), { stderr: /no source files were found: .* or an ignore file \(\.gitignore, \.ignore\) hides them/, exitCode: 0 })
  t.match(indexReport({ outcome: 'busy', holder: { pid: 42, host: 'build-7', since: 0 } }, '/s/i', 5), { stderr: /another build holds \/s\/i \(process 42 on build-7 since 00:00:00 UTC\) after waiting 5 s; nothing was published/, exitCode: EXIT_BUSY })
  t.match(indexReport({ outcome: 'failed', status: status({ state: 'unavailable', problem: { kind: 'disk-full', stateDir: '/s', file: '/s/i', detail: 'database or disk is full' } }) }, '/s/i', 5), { stderr: /the build failed \(disk-full at \/s: database or disk is full\); the published index, if any, is unchanged/, exitCode: 1 })
  t.match(indexReport({ outcome: 'failed', status: status({ state: 'failed', error: 'the index thread stopped' }) }, '/s/i', 5), { stderr: /the build failed \(the index thread stopped\)/, exitCode: 1 })
  t.match(indexReport({ outcome: 'failed', status: status({ state: 'failed' }) }, '/s/i', 5), { stderr: /the build failed \(failed\)/ })
  t.equal(EXIT_BUSY, 75, 'EX_TEMPFAIL: try again later')
  t.equal(waitSecondsOf(undefined), 600)
  t.equal(waitSecondsOf(['5', '30']), 30, 'the last one given')
  for (const bad of ['-1', '1.5', 'soon', '']) t.throws(() => waitSecondsOf([bad]), { code: 'APP_ERR_CONFIG_INVALID', message: /--wait: a whole number of seconds/ }, bad)
})
