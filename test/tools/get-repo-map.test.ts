import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t, { type Test } from 'tap'
import { Value } from '@sinclair/typebox/value'
import { createCodeIndex, type CodeIndex } from '../../src/services/code-index/code-index.js'
import { loadSqlite } from '../../src/services/code-index/index-schema.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import { compileArguments } from '../../src/mcp/registry/validate.js'
import type { ToolResult } from '../../src/tool-api/define-tool.js'
import { getRepoMap, GetRepoMapOutput, MAX_RANKED_FILES } from '../../src/tools/get-repo-map.js'
import { rankRepository } from '../../src/tool-kit/repo-rank.js'
import type { MapUse } from '../../src/services/code-index/index.js'
import { tempDir, textOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })
const tokenizer = createTokenizer({ workers: 0 })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation

/** core.ts used by ten files, mid.ts by five, leaf.ts by one; `init` defined by every user (a name that tells nothing). */
function project (): Record<string, string> {
  const files: Record<string, string> = {
    'src/core.ts': 'export function createServer (port: number): Server { return new Server(port) }\nexport class Server {\n  constructor (readonly port: number) {}\n  listen (): void {}\n}\n',
    'src/mid.ts': 'export function parseConfig (text: string): Config { return { text } }\nexport interface Config { text: string }\n',
    'src/leaf.ts': 'export function rarelyUsed (): number { return 1 }\nexport function neverUsed (): number { return 2 }\n',
    'lib/c/slab.h': 'struct cache { int size; };\n',
    'lib/c/other.h': '#define cache 1\n',
    'lib/c/use.c': '#include "slab.h"\nstruct cache *a; struct cache *b; struct cache *c;\n',
    'docs/README.md': '# no source here\n'
  }
  for (let i = 0; i < 10; i++) {
    const uses = ['import { createServer } from \'./core.js\'', 'createServer(1)']
    if (i < 5) uses.push('import { parseConfig } from \'./mid.js\'', 'parseConfig(\'x\')')
    if (i === 0) uses.push('import { rarelyUsed } from \'./leaf.js\'', 'rarelyUsed()', 'createServer(2).listen()')
    files[`src/users/u${i}.ts`] = `${uses.join('\n')}\nexport function init (): void {}\ninit()\n`
  }
  return files
}

interface Fixture { root: string, workspace: WorkspaceService, index: CodeIndex }

async function fixture (t: Test, files: Record<string, string> = project()): Promise<Fixture> {
  const root = tempDir(t, 'wmcp-repo-map-')
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const workspace = await createWorkspace({ root, log })
  const index = createCodeIndex({ workspace, treeSitter: where, log, sqlite, file: path.join(tempDir(t, 'wmcp-repo-map-state-'), 'index.sqlite') })
  t.teardown(() => index.close())
  await index.ready(120_000, new AbortController().signal)
  return { root, workspace, index }
}

const map = async (f: Pick<Fixture, 'workspace' | 'index'>, args: Record<string, unknown> = {}): Promise<ToolResult> =>
  await getRepoMap.run({ workspace: f.workspace, codeIndex: f.index, tokenizer, ...args } as never, toolContext())
const data = (r: ToolResult): Record<string, any> => r.structuredContent as Record<string, any>

t.test('the map: layout and languages, then the files the rest of the code uses most, each with its definitions and signatures', async (t) => {
  const f = await fixture(t)
  const whole = await map(f)
  t.ok(Value.Check(GetRepoMapOutput, data(whole)))
  t.equal(data(whole).source_files, 16)
  t.same(data(whole).languages, [{ language: 'TypeScript', files: 13 }, { language: 'C', files: 3 }])
  t.same(data(whole).files.map((file: { path: string }) => file.path), ['src/core.ts', 'src/mid.ts', 'src/leaf.ts', 'lib/c/slab.h'], 'most used first (slab.h\'s cache has one user, as rarelyUsed has, and two definitions); a name each file defines for itself is no one\'s use')
  t.same(data(whole).files[0].definitions, [
    { name: 'createServer', kind: 'function', line: 1, signature: 'export function createServer (port: number): Server { return new Server(port) }', users: 10 },
    { name: 'listen', kind: 'method', line: 4, signature: 'listen (): void {}', users: 1 }
  ], 'a class used only in its own file is not shown')
  t.match(textOf(whole), /\n {2}4 method Server\.listen \(used in 1 other file\) — listen \(\): void \{\}\n/)
  t.notOk(data(whole).files.some((file: { definitions: Array<{ name: string }> }) => file.definitions.some(d => d.name === 'neverUsed')), 'an unused definition is not shown')
  t.match(textOf(whole), /^# Map of the workspace — 16 source files: TypeScript 13, C 3\n## Layout\n- src\/ 13 source files \(TypeScript\)\n- lib\/ 3 source files \(C\)\n## Files and definitions the rest of the code uses most, best first/)
  t.match(textOf(whole), /\nsrc\/core\.ts:\n {2}1 function createServer \(used in 10 other files\) — export function createServer \(port: number\): Server \{ return new Server\(port\) \}\n {2}4 method Server\.listen [^\n]*\nsrc\/mid\.ts:\n {2}1 function parseConfig \(used in 5 other files\)/)
  // A type's uses count for the type, not for a macro of the same name.
  const c = await map(f, { path: 'lib/c' })
  t.same(data(c).files, [{ path: 'lib/c/slab.h', definitions: [{ name: 'cache', kind: 'struct', line: 1, signature: 'struct cache { int size; };', users: 1 }] }])
  t.match(textOf(c), /^# Map of lib\/c — 3 source files: C 3\n## Layout\n- \(files at the top\) 3 source files \(C\)\n/)
  // A name every user defines itself means each of them a tenth: it trails the names defined once.
  const users = await map(f, { path: 'src/users' })
  t.same(data(users).files, [], 'init is used only where it is defined')
  t.same(data(await map(f, { path: 'src/core.ts' })).files.map((file: { path: string }) => file.path), ['src/core.ts'], 'a file alone')
  const empty = await map(f, { path: 'docs' })
  t.equal(textOf(empty), '# Map of docs — 0 source files: none indexed\n## Layout')
  t.same(data(empty), { source_files: 0, languages: [], files: [] })
})

t.test('never over the budget, most used first whatever the budget; a session that sees part of the workspace sees only that', async (t) => {
  const files = project()
  for (let i = 0; i < 40; i++) files[`src/more/m${i}.ts`] = `import { createServer } from '../core.js'\ncreateServer(${i})\n${Array.from({ length: 8 }, (_, j) => `export function helper${i}x${j} (value: number, other: string, third: boolean): number { return ${j} }`).join('\n')}\n`
  files['src/more/all.ts'] = Array.from({ length: 40 }, (_, i) => `import { ${Array.from({ length: 8 }, (_, j) => `helper${i}x${j}`).join(', ')} } from './m${i}.js'\n${Array.from({ length: 8 }, (_, j) => `helper${i}x${j}(1, 'a', true)`).join('\n')}`).join('\n')
  files['tools/one.py'] = 'def one():\n    return 1\n'
  files['tools/two.go'] = 'package tools\n\nfunc Two() int { return 2 }\n'
  const f = await fixture(t, files)
  t.same(data(await map(f, { path: 'tools' })).languages, [{ language: 'Go', files: 1 }, { language: 'Python', files: 1 }], 'languages as many: by name')
  let shown = 0
  for (const budget of [1000, 2000, 4000, 8000]) {
    const answer = await map(f, { max_response_tokens: budget })
    t.ok(await tokenizer.countExact(textOf(answer)) <= budget, `within ${budget} tokens`)
    t.equal(data(answer).files[0].path, 'src/core.ts', 'the most used file leads')
    const count = data(answer).files.reduce((sum: number, file: { definitions: unknown[] }) => sum + file.definitions.length, 0)
    t.ok(count >= shown, 'a bigger budget shows as much or more')
    shown = count
    if (budget === 1000) t.match(textOf(answer), /\n… \d+ more ranked definitions \(max_response_tokens=1000; raise it, or map a folder with path\)$/)
  }
  // A session whose client roots narrow the workspace to src/more: only its files, ranked by its own uses.
  const narrowed = await map({ ...f, workspace: await createWorkspace({ root: path.join(f.root, 'src/more'), log }) })
  t.equal(data(narrowed).source_files, 41)
  t.ok(data(narrowed).files.every((file: { path: string }) => !file.path.includes('/')), 'paths as the session shows them')
  t.notOk(JSON.stringify(data(narrowed)).includes('createServer'), 'a definition outside its roots is not described')
})

t.test('a folder of more files than are ranked is shown by its layout, with the call that maps one of its folders', async (t) => {
  const f = await fixture(t, { 'a/x.ts': 'export function x (): void {}\n' })
  const many = (under: string): Array<{ id: number, path: string, language: string }> => Array.from({ length: MAX_RANKED_FILES + 1 }, (_, i) => ({ id: i + 1, path: path.join(f.root, under, i < 2000 ? 'big' : `s${String(i % 30).padStart(2, '0')}`, `f${i}.ts`), language: 'TypeScript' }))
  const index = { ...f.index, map: { ...f.index.map, files: (scope?: string) => many(scope === undefined ? '' : 'a') } } as CodeIndex
  const answer = await map({ workspace: f.workspace, index })
  t.match(textOf(answer), /^# Map of the workspace — 3001 source files: TypeScript 3001\nNote: the workspace holds 3001 source files; definitions are ranked for at most 3000 — map one of the folders above, e\.g\. get_repo_map path="big"\.\n## Layout\n- big\/ 2000 source files \(TypeScript\)\n- s00\/ 34 source files \(TypeScript\)\n[^]*\n- … 7 more folders$/)
  t.match(textOf(await map({ workspace: f.workspace, index }, { path: 'a' })), /\nNote: a holds 3001 source files; [^\n]* e\.g\. get_repo_map path="a\/big"\.\n/, 'a folder says its own name')
  t.same(data(answer).files, [])
  const validate = compileArguments(getRepoMap.input, new Set(['workspace', 'codeIndex', 'tokenizer']))
  t.match(validate({ max_response_tokens: 100 }), { ok: false, message: /^max_response_tokens: / })
  t.match(validate({ max_response_tokens: 1e9 }), { ok: false, message: /^max_response_tokens: / })
  await t.rejects(map(f, { path: '../outside' }), { message: /^ERROR PATH_OUTSIDE_ROOT/ })
})

t.test('the rank: breadth over one heavy name — each name counts log(1 + users ÷ definers); a field use means a member, not a function or macro', async (t) => {
  const def = (file: number, name: string, kind = 'function', container: string | null = null): { file: number, name: string, kind: string, container: string | null, line: number, endLine: number, signature: string } =>
    ({ file, name, kind, container, line: 1, endLine: 1, signature: name })
  const call = (token: string, file: number): MapUse => ({ token, file, kind: 'call' })
  // File 1 defines one name 1,000 files call; file 2 defines twelve names, each called by 20 files.
  const names = Array.from({ length: 12 }, (_, i) => `n${i}`)
  const definitions = [def(1, 'kfree'), ...names.map(n => def(2, n)), def(3, 'shared'), def(4, 'shared'), def(5, 'lru', 'macro'), def(6, 'listen', 'method', 'Server')]
  const uses = [
    ...Array.from({ length: 1000 }, (_, i) => call('kfree', 100 + i)),
    ...names.flatMap(n => Array.from({ length: 20 }, (_, i) => call(n, 2000 + i))),
    ...Array.from({ length: 30 }, (_, i) => call('shared', 3000 + i)),
    call('shared', 3),
    { token: 'lru', file: 7, kind: 'field' as const }, { token: 'listen', file: 7, kind: 'field' as const }
  ]
  const ranked = rankRepository(definitions, uses, name => name, name => name === 'shared' ? 3 : 1)
  const score = new Map(ranked.map(file => [file.id, file.score]))
  t.same(ranked.slice(0, 2).map(file => file.id), [2, 1], 'twelve names used by twenty files each lead one name used by a thousand')
  t.equal(score.get(1), Math.log1p(1000), 'how often each user calls it does not count, how many users do')
  t.same(ranked.find(file => file.id === 2)?.definitions.map(d => d.users), Array(12).fill(20))
  t.equal(score.get(3), Math.log1p(30 / 3), 'a name defined three times gives each a third of its users; its definer\'s own uses are none')
  t.equal(score.get(5), 0, 'p->lru is no use of #define lru')
  t.equal(score.get(6), Math.log1p(1), 'server.listen is a use of the method listen')
  // An aggregator (an index file importing forty names of one file) gives that file one vote, shared by the forty.
  const forty = Array.from({ length: 40 }, (_, i) => def(8, `part${i}`))
  const aggregated = rankRepository([...forty, def(10, 'twice')], [...forty.map(d => call(d.name, 9)), call('twice', 11), call('twice', 12)], name => name, () => 1)
  t.same(aggregated.map(file => file.id), [10, 8], 'one name two files use leads forty names one file uses')
  t.ok(Math.abs((aggregated[1].score) - 40 * Math.log1p(1 / 40)) < 1e-9)
})
