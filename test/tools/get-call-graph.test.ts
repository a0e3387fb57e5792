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
import { MAX_CALLEES, MAX_CALLER_SITES, MAX_NODES } from '../../src/tool-kit/call-graph.js'
import { getCallGraph, GetCallGraphOutput } from '../../src/tools/get-call-graph.js'
import { tempDir, textOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })
const tokenizer = createTokenizer({ workers: 0 })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation

const PROJECT: Record<string, string> = {
  'lib.h': 'int compute(int n);\n',
  'lib.c': '#include "lib.h"\n\nstatic int helper(int n) { return n * 2; }\n\nint compute(int n)\n{\n\tprintf("%d", n);\n\tlog_it(n);\n\treturn helper(n) + helper(1);\n}\n',
  'a.c': 'void log_it(int n) { }\nvoid a_user(void) { log_it(1); }\n',
  'b.c': 'void log_it(int n) { }\nvoid b_user(void) { log_it(2); }\n',
  'main.c': '#include "lib.h"\n\nint run(void) { return compute(1); }\n\nint main(void)\n{\n\treturn compute(2) + compute(3) + run();\n}\n',
  'app.py': 'from lib import compute\n\ncompute(4)\n\n\ndef start():\n    return compute(5)\n'
}

interface Fixture { workspace: WorkspaceService, index: CodeIndex }

async function fixture (t: Test, files: Record<string, string> = PROJECT): Promise<Fixture> {
  const root = tempDir(t, 'wmcp-call-graph-')
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const workspace = await createWorkspace({ root, log })
  const index = createCodeIndex({ workspace, treeSitter: where, log, sqlite, file: path.join(tempDir(t, 'wmcp-call-graph-state-'), 'index.sqlite') })
  t.teardown(() => index.close())
  await index.ready(120_000, new AbortController().signal)
  return { workspace, index }
}

const graph = async (f: Fixture, args: Record<string, unknown>): Promise<ToolResult> =>
  await getCallGraph.run({ workspace: f.workspace, codeIndex: f.index, tokenizer, ...args } as never, toolContext())
const data = (r: ToolResult): Record<string, any> => r.structuredContent as Record<string, any>
const edges = (r: ToolResult, side: 'callers' | 'callees'): string[] => data(r)[side].map((e: Record<string, any>) => `${String(e.from)} -> ${String(e.to)} ${String(e.status)} ${String(e.calls)}${e.candidates === undefined ? '' : ` [${(e.candidates as string[]).join(' ')}]`}`)

t.test('callers and callees with their call sites: resolved, ambiguous between definitions, or unresolved — never guessed', async (t) => {
  const f = await fixture(t)
  const both = await graph(f, { name: 'compute' })
  t.ok(Value.Check(GetCallGraphOutput, data(both)))
  t.equal(data(both).root, 'lib.c:5')
  t.same(edges(both, 'callers'), ['app.py -> lib.c:5 resolved 1', 'app.py:6 -> lib.c:5 resolved 1', 'main.c:3 -> lib.c:5 resolved 1', 'main.c:5 -> lib.c:5 resolved 2'])
  t.same(edges(both, 'callees'), ['lib.c:5 -> ?printf unresolved 1', 'lib.c:5 -> ?log_it ambiguous 1 [a.c:1 b.c:1]', 'lib.c:5 -> lib.c:3 resolved 2'])
  t.same(data(both).callees[2].sites, [{ path: 'lib.c', line: 9, column: 9 }, { path: 'lib.c', line: 9, column: 21 }], 'each edge with its call sites')
  const text = textOf(both)
  t.match(text, /^# Call graph of compute — lib\.c:5 \(function\): callers and callees, depth 1\n## Callers \(4 edges\)\n/)
  t.match(text, /\n- \(top level of app\.py\) — app\.py: 1 call at app\.py:3:1\n- start — app\.py:6 \(function\): 1 call at app\.py:7:12\n/)
  t.match(text, /\n- main — main\.c:5 \(function\): 2 calls at main\.c:7:9, main\.c:7:22\n## Callees \(3 edges\)\n- printf — unresolved: no definition is indexed \(1 call at lib\.c:7:2\)\n- log_it — ambiguous: could be any of a\.c:1, b\.c:1 \(1 call at lib\.c:8:2\)\n- helper — lib\.c:3 \(function\): 2 calls at lib\.c:9:9, lib\.c:9:21$/)
  // The callers of one of two definitions: its own file's call resolved, another file's tied by name only, ambiguous.
  const one = await graph(f, { name: 'log_it', definition: 'b.c', direction: 'callers' })
  t.same(edges(one, 'callers'), ['b.c:2 -> b.c:1 resolved 1', 'lib.c:5 -> b.c:1 ambiguous 1 [a.c:1 b.c:1]'])
  t.same(data(one).callees, [])
  t.match(textOf(one), /^# Call graph of log_it — b\.c:1 \(function\): callers, depth 1\n## Callers \(2 edges\)\n/)
  const first = await graph(f, { name: 'log_it', direction: 'callees' })
  t.match(textOf(first), /\n"log_it" has 2 definitions; this graph is of the first, a\.c:1 — pass definition="b\.c:1" \(or another\) for a different one\.\n## Callees \(0 edges\)\nIt calls nothing the index knows of\.$/)
  // A name with no definition: its callers are the calls of the name, and what it calls is not known.
  const printf = await graph(f, { name: 'printf' })
  t.same(edges(printf, 'callers'), ['lib.c:5 -> ?printf unresolved 1'])
  t.match(textOf(printf), /\nNo definition of "printf" is indexed: its callers are the calls of the name; what it calls is not known\.\n[^]*\n## Callees \(0 edges\)\nUnknown: it has no definition indexed\.$/)
  t.match(textOf(await graph(f, { name: 'helper', direction: 'callers', path: 'main.c' })), /\n## Callers \(0 edges\)\nNo indexed code calls it\.$/, 'path narrows the callers')
})

t.test('depth follows calls away from the function, each node once; the limits are the schema\'s', async (t) => {
  const f = await fixture(t)
  const deep = await graph(f, { name: 'helper', direction: 'callers', depth: 3 })
  t.same(edges(deep, 'callers'), ['lib.c:5 -> lib.c:3 resolved 2', 'app.py -> lib.c:5 resolved 1', 'app.py:6 -> lib.c:5 resolved 1', 'main.c:3 -> lib.c:5 resolved 1', 'main.c:5 -> lib.c:5 resolved 2', 'main.c:5 -> main.c:3 resolved 1'])
  t.match(textOf(deep), /\n- compute — lib\.c:5 \(function\): 2 calls at lib\.c:9:9, lib\.c:9:21\n {2}- \(top level of app\.py\) — app\.py: 1 call at app\.py:3:1\n {2}- start — app\.py:6 \(function\): 1 call at app\.py:7:12\n {2}- run — main\.c:3 \(function\): 1 call at main\.c:3:24\n {4}- main — main\.c:5 \(function\): 1 call at main\.c:7:35\n {2}- main — main\.c:5 \(function\): 2 calls at main\.c:7:9, main\.c:7:22$/)
  const shallow = await graph(f, { name: 'helper', direction: 'callers', depth: 1 })
  t.same(edges(shallow, 'callers'), ['lib.c:5 -> lib.c:3 resolved 2'])
  const down = await graph(f, { name: 'main', direction: 'callees', depth: 2 })
  t.same(edges(down, 'callees'), ['main.c:5 -> lib.c:5 resolved 2', 'main.c:5 -> main.c:3 resolved 1', 'lib.c:5 -> ?printf unresolved 1', 'lib.c:5 -> ?log_it ambiguous 1 [a.c:1 b.c:1]', 'lib.c:5 -> lib.c:3 resolved 2', 'main.c:3 -> lib.c:5 resolved 1'])
  t.match(textOf(down), /\n## Callees \(6 edges\)\n- compute — lib\.c:5 \(function\): 2 calls at main\.c:7:9, main\.c:7:22\n {2}- printf — unresolved: no definition is indexed \(1 call at lib\.c:7:2\)\n {2}- log_it — ambiguous: could be any of a\.c:1, b\.c:1 \(1 call at lib\.c:8:2\)\n {2}- helper — lib\.c:3 \(function\): 2 calls at lib\.c:9:9, lib\.c:9:21\n- run — main\.c:3 \(function\): 1 call at main\.c:7:35\n {2}- compute — lib\.c:5 \(function\): 1 call at main\.c:3:24 \(expanded above\)$/)
  const validate = compileArguments(getCallGraph.input, new Set(['workspace', 'codeIndex', 'tokenizer']))
  t.match(validate({ name: 'main', depth: 4 }), { ok: false, message: /^depth: / })
  t.match(validate({ name: 'main', depth: 0 }), { ok: false, message: /^depth: / })
  t.match(validate({ name: 'main', direction: 'up' }), { ok: false, message: /^direction: / })
  await t.rejects(graph(f, { name: 'main()' }), { message: /^ERROR INVALID_ARGUMENT: name: "main\(\)" is not a name as code spells one/ })
  await t.rejects(graph(f, { name: 'Nobody.main' }), { message: /^ERROR INVALID_ARGUMENT: name: no definition of "main" belongs to "Nobody"/ })
  await t.rejects(graph(f, { name: 'main', definition: 'lib.c' }), { message: /^ERROR INVALID_ARGUMENT: definition: "lib\.c" names none of them/ })
  await t.rejects(graph(f, { name: 'main', path: '../outside' }), { message: /^ERROR PATH_OUTSIDE_ROOT/ })
})

t.test('the caps: call sites past the first ones, names past the first ones, nodes past the limit are counted and said', async (t) => {
  const callers = Array.from({ length: MAX_CALLER_SITES - 1 }, (_, i) => `void c${i}(void) { target();${i === 0 ? ' target();' : ''} }`).join('\n')
  const callees = Array.from({ length: MAX_CALLEES + 1 }, (_, i) => `\tn${i}();`).join('\n')
  const wide = Array.from({ length: 100 }, (_, i) => `void w${i}(void) { ${Array.from({ length: 5 }, (_, j) => `x${i}_${j}();`).join(' ')} }`).join('\n')
  const f = await fixture(t, {
    'target.c': 'void target(void) { }\n',
    '0top.py': 'target()\n',
    'a.c': `${callers}\n`,
    'b.c': 'void late(void) { target(); target(); }\n',
    'many.c': `void many(void)\n{\n${callees}\n}\n`,
    'wide.c': `${wide}\nvoid root(void) { ${Array.from({ length: 100 }, (_, i) => `w${i}();`).join(' ')} }\n`
  })
  const cut = await graph(f, { name: 'target', direction: 'callers', max_response_tokens: 20000 })
  t.equal(data(cut).callers.length, MAX_CALLER_SITES, 'a script\'s top level and 199 functions')
  t.match(textOf(cut), /\n## Callers \(200 edges\)\n- \(top level of 0top\.py\) — 0top\.py: 1 call at 0top\.py:1:1\n- c0 — a\.c:1 \(function\): 2 calls at a\.c:1:17, a\.c:1:27\n/)
  t.match(textOf(cut), /\nLeft out: 2 more call sites of target — find_references name="target" kind="call" lists them all, or narrow with path\.$/)
  t.match(textOf(await graph(f, { name: 'many', direction: 'callees', max_response_tokens: 20000 })), /\nLeft out: 1 more name many calls\.$/)
  const big = await graph(f, { name: 'root', direction: 'callees', depth: 2, max_response_tokens: 20000 })
  t.ok(data(big).nodes.length <= MAX_NODES + 5)
  t.match(textOf(big), /\nNot followed: \d+ functions past \d+ nodes — ask for a smaller depth or one direction\./)
  // Over the budget: fewer sites, less depth, then as many edges as fit — never more than max_response_tokens.
  for (const budget of [1000, 3000]) {
    const fitted = await graph(f, { name: 'target', direction: 'callers', max_response_tokens: budget })
    t.ok(await tokenizer.countExact(textOf(fitted)) <= budget, `within ${budget} tokens`)
    t.match(textOf(fitted), new RegExp(`\\n… \\d+ more not shown \\(max_response_tokens=${budget}\\): ask for one direction, or narrow with path\\n`))
  }
  const deeper = await graph(f, { name: 'root', direction: 'callees', depth: 2, max_response_tokens: 6000 })
  t.ok(await tokenizer.countExact(textOf(deeper)) <= 6000)
  t.match(textOf(deeper), /\nNote: cut to depth 1 to fit max_response_tokens=6000; ask for one direction or raise max_response_tokens\.$/)
  t.ok(data(deeper).nodes.every((n: { depth: number }) => n.depth <= 1), 'the structured answer holds what the text shows')
})
