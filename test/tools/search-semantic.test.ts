import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import t, { type Test } from 'tap'
import { Value } from '@sinclair/typebox/value'
import { createCodeIndex, type CodeIndex } from '../../src/services/code-index/code-index.js'
import { semanticService } from '../../src/services/code-index/index.js'
import { loadSqlite } from '../../src/services/code-index/index-schema.js'
import { createEmbeddingProvider, embeddingsSettings, type EmbeddingsSettings } from '../../src/services/code-index/embeddings.js'
import type { RecoveryTimers } from '../../src/services/code-index/provider-health.js'
import { createSemanticSearch, type SemanticSearch } from '../../src/services/code-index/semantic.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import { loadConfig } from '../../src/base/config.js'
import { isToolError } from '../../src/base/errors.js'
import type { ToolResult } from '../../src/tool-api/define-tool.js'
import { getWorkspaceInfo } from '../../src/tools/get-workspace-info.js'
import { searchSemantic, SearchSemanticOutput } from '../../src/tools/search-semantic.js'
import { startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js'
import { manualTimers } from '../helpers/manual-timers.js'
import { waitUntil } from '../helpers/wait.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })
const tokenizer = createTokenizer({ workers: 0 })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation

const FILES: Record<string, string> = {
  'src/upload.ts': 'export class Uploader {\n  async retryFailedUpload (path: string): Promise<number> {\n    // retry each failed upload with backoff\n    return 3\n  }\n}\n',
  'src/auth/token.ts': 'export function validateAccessToken (token: string): boolean {\n  return token.startsWith("Bearer ")\n}\n',
  'src/config.py': 'def parse_config(path):\n    return {}\n',
  'scripts/deploy.py': 'import os\n\nprint("deploy the rollout")\nos.system("rollout")\n',
  // Many small functions: enough chunks for several pages.
  ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`src/handlers/h${i}.go`, `package handlers\n\n// Handler${i} handles request ${i}\nfunc Handler${i}() {\n${'\tpanic("request handler lost its client connection while reading body bytes")\n'.repeat(12)}}\n`]))
}

interface Fixture { root: string, workspace: WorkspaceService, index: CodeIndex, semantic: SemanticSearch, fake: FakeEmbeddings }

async function fixture (t: Test, env: Record<string, string> = {}, maxChunks = 1000, timers?: RecoveryTimers): Promise<Fixture> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-semantic-tool-')))
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-semantic-tool-state-'))
  t.teardown(() => {
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(state, { recursive: true, force: true })
  })
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const fake = await startFakeEmbeddings()
  t.teardown(() => fake.close())
  const workspace = await createWorkspace({ root, log })
  const file = path.join(state, 'index.sqlite')
  const index = createCodeIndex({ workspace, treeSitter: where, log, sqlite, file })
  const config = loadConfig({ embeddingsUrl: `${fake.url}/v1`, embeddingsModel: 'fake', embeddingsMaxChunks: String(maxChunks), ...env }, {}, root)
  // The server's own wiring, or (with timers) the same provider with recovery timers the test fires.
  const semantic = timers === undefined
    ? semanticService(config, index, workspace, log, {}) as SemanticSearch
    : createSemanticSearch({ index, workspace, provider: createEmbeddingProvider(embeddingsSettings(config, {}) as EmbeddingsSettings), log, maxChunks, timers })
  t.teardown(async () => { await semantic.close(); await index.close() })
  await index.ready(60_000, new AbortController().signal)
  await waitUntil(() => semantic.status().state === 'ready' || semantic.status().state === 'failed', 'the background embedding to end')
  return { root, workspace, index, semantic, fake }
}

const search = async (f: Pick<Fixture, 'workspace' | 'index' | 'semantic'>, args: Record<string, unknown>): Promise<ToolResult> =>
  await searchSemantic.run({ workspace: f.workspace, codeIndex: f.index, semantic: f.semantic, tokenizer, ...args } as never, toolContext())
const data = (r: ToolResult): Record<string, any> => r.structuredContent as Record<string, any>
const paths = (r: ToolResult): string[] => data(r).results.map((x: { path: string }) => x.path)

t.test('search_semantic: the nearest vectors first (word-hashing fake provider), fused with the word ranking, with the lines and the exact next call', async (t) => {
  const f = await fixture(t)
  t.match(f.semantic.status(), { state: 'ready', vectors: f.index.status().chunks })
  // Prose first (chunk-text.ts): the file and definition as words, the names it defines, its comments, then its code as words.
  const embedded = f.fake.requests.flatMap(r => r.inputs).find(input => input.includes('retry each failed upload with backoff'))
  t.match(embedded, /^src\/upload: uploader \(retry failed upload\) retry each failed upload with backoff\n/i, 'a chunk is embedded under a line naming its file and definition in words')
  t.match(embedded, /async retry failed upload \(path: string\)/i, 'then its code, identifiers as words')
  const found = await search(f, { query: 'retry the failed uploads', page_size: 3 })
  t.equal(paths(found)[0], 'src/upload.ts')
  t.ok(Value.Check(SearchSemanticOutput, data(found)), 'structuredContent matches the published schema')
  t.match(data(found).results[0], { start_line: 1, end_line: 6, symbol: 'Uploader', kind: 'class', score: Number, similarity: Number })
  t.match(textOf(found), /^# Code about "retry the failed uploads", best first — by meaning \(fake\) and by words, fused\n## src\/upload\.ts:1-6 class Uploader \(similarity 0\.\d\d\)\n1\texport class Uploader \{\n2\t {2}async retryFailedUpload/)
  t.match(textOf(found), /\nRead one whole: read_files files=\[\{"path":"src\/upload\.ts","start_line":1,"end_line":6\}\]\n/)
  t.match(textOf(found), /\nChunks 1–3 of \d+ \| next: search_semantic query="retry the failed uploads" page_size=3 offset=3$/)
  // No word of this query is in the code's words as the index splits them, yet the meaning (the fake's hashed
  // tokens of "access token") is near.
  t.equal(paths(await search(f, { query: 'access token validation' }))[0], 'src/auth/token.ts')
  t.same(paths(await search(f, { query: 'handler', path: 'src/auth' })), ['src/auth/token.ts'], 'path narrows')
  const err = await search(f, { query: 'x', path: 'nope' }).catch((e: unknown) => e)
  t.ok(isToolError(err) && /PATH_NOT_FOUND/.test((err as Error).message), 'a path that is not there is the usual error')
})

t.test('search_semantic: pages are slices of one fused ranking; a small budget cuts a page and says how to go on', async (t) => {
  const f = await fixture(t)
  const asked = f.fake.requests.length
  const whole = paths(await search(f, { query: 'request handler panic', page_size: 12 }))
  const pages: string[] = []
  for (let offset = 0; offset < 12; offset += 4) pages.push(...paths(await search(f, { query: 'request handler panic', page_size: 4, offset })))
  t.same(pages, whole, 'deterministic: pages add up to the whole')
  t.equal(f.fake.requests.length, asked + 1, 'the query is embedded once: its pages reuse its vector')
  t.equal(new Set(whole).size, whole.length)
  const cut = await search(f, { query: 'request handler panic', page_size: 12, max_response_tokens: 1000 })
  t.ok(await tokenizer.countExact(textOf(cut)) <= 1000)
  t.match(textOf(cut), /\nNote: page cut to \d+ chunks to fit max_response_tokens=1000; the next call continues\n/)
  const deep = await search(f, { query: 'request handler panic', offset: 199 })
  t.same(data(deep).results, [], 'past the end: an empty page')
})

t.test('search_semantic: coverage notes while vectors are missing; a provider down answers by words at once, saying why, after one try', async (t) => {
  const capped = await fixture(t, { embeddingsBatchSize: '1' }, 2)
  const partial = await search(capped, { query: 'request handler' })
  t.match(textOf(partial), /\nNote: \d+ of \d+ chunks have vectors — --embeddings-max-chunks is reached; the others are found by their words only\.\n/)
  t.match(textOf(partial), /\(by words only\)/, 'a chunk found by its words alone says so')
  const info = await getWorkspaceInfo.run({ workspace: capped.workspace, search: { limits: { timeoutMs: 1, maxFileSize: '1M', cacheTtlMs: 1 }, engine: async () => ({ version: '1', source: 'x', pcre2Available: false }) }, tokenizer, catalog: { entries: () => [] }, codeIndex: capped.index, semantic: capped.semantic } as never, toolContext())
  t.match(textOf(info), /\n- semantic search \(search_semantic\): model fake, 64 dimensions; \d+ of \d+ chunks have vectors; stopped at --embeddings-max-chunks\n/)
  t.match(data(info), { capabilities: { semantic_search: true }, embeddings: { state: 'ready', model: 'fake', dimensions: 64, vectors: Number } })

  const f = await fixture(t)
  const asked = f.fake.requests.length
  f.fake.options.failWith = 503
  const down = await search(f, { query: 'retry upload' })
  t.equal(f.fake.requests.length, asked + 1, 'one try (the server\'s settings retry a failed request 3 times; a query does not)')
  t.equal(paths(down)[0], 'src/upload.ts', 'found by its words')
  t.match(textOf(down), /^# Code about "retry upload", best first — by words only \(no vectors now\)\nNote: vectors are unavailable \(EMBEDDINGS_FAILED: the provider answered HTTP 503: down \(503\)\) — ranked by words only \(as search_code ranks\); the server asks the provider again at \d\d:\d\d:\d\d UTC and embedding resumes when it answers\.\n## src\/upload\.ts:1-6 class Uploader \(by words only\)\n/)
  t.equal(data(down).results[0].similarity, undefined)
  t.ok(Value.Check(SearchSemanticOutput, data(down)))
  await search(f, { query: 'parse config' })
  t.equal(f.fake.requests.length, asked + 1, 'while the outage is known, a call does not ask again')
  const said = await getWorkspaceInfo.run({ workspace: f.workspace, search: { limits: { timeoutMs: 1, maxFileSize: '1M', cacheTtlMs: 1 }, engine: async () => ({ version: '1', source: 'x', pcre2Available: false }) }, tokenizer, catalog: { entries: () => [] }, codeIndex: f.index, semantic: f.semantic } as never, toolContext())
  t.match(textOf(said), /\n- semantic search \(search_semantic\): model fake, 64 dimensions; \d+ of \d+ chunks have vectors; embedding failed: the provider answered HTTP 503: down \(503\) \(the server asks the provider again at \d\d:\d\d:\d\d UTC\)\n/, 'the reason, in one line')
  t.notMatch(textOf(said), /Hint|ERROR|127\.0\.0\.1/, 'no hint, no error code, no provider URL repeated')
  t.same(data(said).embeddings, { state: 'failed', model: 'fake', dimensions: 64, vectors: f.index.status().chunks, error: 'the provider answered HTTP 503: down (503)' })
})

t.test('search_semantic: after an outage the server\'s probe resumes embedding, and the next answer carries no stale note', async (t) => {
  const clock = manualTimers()
  const f = await fixture(t, { embeddingsDimensions: '64' }, 1000, clock.timers)
  f.fake.options.failWith = 503
  t.match(textOf(await search(f, { query: 'retry upload' })), /\nNote: vectors are unavailable \(EMBEDDINGS_FAILED: the provider answered HTTP 503: down \(503\)\) — ranked by words only \(as search_code ranks\); the server asks the provider again at 12:01:00 UTC and embedding resumes when it answers\.\n/, 'the time of the next probe, from the injected clock')
  t.same(clock.delays, [60_000])
  f.fake.options.failWith = undefined
  const asked = f.fake.requests.length
  clock.fire()
  await waitUntil(() => f.semantic.status().state === 'ready' && f.fake.requests.length > asked, 'the probe to be answered and embedding to resume')
  t.equal(f.fake.requests.length, asked + 1, 'the probe asked once; nothing was left to embed')
  t.match(f.semantic.status(), { state: 'ready', vectors: f.index.status().chunks })
  const back = await search(f, { query: 'retry upload' })
  t.match(textOf(back), /^# Code about "retry upload", best first — by meaning \(fake\) and by words, fused\n## src\/upload\.ts:1-6 class Uploader \(similarity 0\.\d\d\)\n/, 'no note: every chunk has its vector and the provider answers')
})

t.test('search_semantic: a failed background run is noted; a session narrowed to a folder sees only its chunks', async (t) => {
  const f = await fixture(t)
  // Stop the provider for the background run only: the query itself still gets its vector.
  const failing: SemanticSearch = { ...f.semantic, status: () => ({ ...f.semantic.status(), state: 'failed', error: 'HTTP 401' }) }
  t.match(textOf(await search({ ...f, semantic: failing }, { query: 'retry upload' })), /\nNote: \d+ of \d+ chunks have vectors — embedding is paused \(HTTP 401\); the others are found by their words only\.\n/)
  const later: SemanticSearch = { ...f.semantic, status: () => ({ ...f.semantic.status(), state: 'failed', error: 'HTTP 401', retryAt: Date.UTC(2026, 0, 1, 12, 30) }) }
  t.match(textOf(await search({ ...f, semantic: later }, { query: 'retry upload' })), /\nNote: \d+ of \d+ chunks have vectors — embedding is paused \(HTTP 401; the provider is asked again at 12:30:00 UTC\); the others are found by their words only\.\n/)
  const narrowed = await createWorkspace({ root: path.join(f.root, 'src/auth'), log })
  const seen = await search({ ...f, workspace: narrowed }, { query: 'retry the failed uploads' })
  t.same(paths(seen), ['token.ts'], 'only what the narrowed session serves, under its own paths')
  const empty = await search({ ...f, workspace: await createWorkspace({ root: path.join(f.root, 'src/handlers'), log }) }, { query: 'zzz', path: 'h1.go' })
  t.equal(data(empty).results.length, 1)
})

t.test('search_semantic: top-level code, a query of no words, nothing near', async (t) => {
  const f = await fixture(t)
  const code = await search(f, { query: 'deploy the rollout', page_size: 1 })
  t.match(textOf(code), /\n## scripts\/deploy\.py:1-4 code \(similarity 0\.\d\d\)\n/)
  t.same(data(code).results[0].symbol, undefined, 'top-level code has no symbol')
  t.ok(data(await search(f, { query: '!! ?' })).results.length > 0, 'no word to rank by: by meaning alone')
  const wordsOnly: SemanticSearch = {
    ...f.semantic,
    search: async (...args) => {
      const ranking = await f.semantic.search(...args)
      return { ...ranking, hits: ranking.hits.map(({ similarity: _, ...hit }) => hit) }
    }
  }
  t.match(textOf(await search({ ...f, semantic: wordsOnly }, { query: 'deploy the rollout', page_size: 1 })), /\n## scripts\/deploy\.py:1-4 code \(by words only\)\n/, 'a chunk without a vector is said to be found by its words')
  const far: SemanticSearch = { ...f.semantic, search: async () => ({ hits: [], deeper: false }) }
  const none = await search({ ...f, semantic: far }, { query: '!! ?' })
  t.same(data(none).results, [])
  t.match(textOf(none), /\nNothing indexed comes close\. search_regex searches every file as text; list_directory shows what is there\.\n/)
})

t.test('get_workspace_info: the vectors\' state in words and in structuredContent', async (t) => {
  const f = await fixture(t)
  const info = async (status: Partial<ReturnType<SemanticSearch['status']>> | undefined): Promise<ToolResult> => await getWorkspaceInfo.run({
    workspace: f.workspace,
    search: { limits: { timeoutMs: 1, maxFileSize: '1M', cacheTtlMs: 1 }, engine: async () => ({ version: '1', source: 'x', pcre2Available: false }) },
    tokenizer,
    catalog: { entries: () => [] },
    codeIndex: f.index,
    semantic: status === undefined ? undefined : { status: () => ({ state: 'ready', model: 'm', vectors: 3, embedded: 3, capped: false, ...status }) }
  } as never, toolContext())
  t.match(textOf(await info({ state: 'waiting' })), /\n- semantic search \(search_semantic\): model m; 3 of \d+ chunks have vectors; waiting for the code index\n/)
  t.match(textOf(await info({ state: 'embedding', dims: 8 })), /model m, 8 dimensions; 3 of \d+ chunks have vectors; embedding in the background\n/)
  t.match(textOf(await info({ state: 'failed' })), /; embedding failed: unknown error\n/)
  t.match(textOf(await info({ state: 'failed', error: 'the provider answered HTTP 401: bad key', retryAt: Date.UTC(2026, 0, 1, 12, 2) })), /; embedding failed: the provider answered HTTP 401: bad key \(the server asks the provider again at 12:02:00 UTC\)\n/)
  t.match(data(await info({ state: 'failed', error: 'HTTP 401' })), { embeddings: { state: 'failed', model: 'm', vectors: 3, error: 'HTTP 401' } })
  t.match(textOf(await info({})), /; up to date\n/)
  const off = await info(undefined)
  t.match(textOf(off), /\n- semantic search: not configured \(search_code ranks code by its words\)\n/)
  t.match(data(off), { capabilities: { semantic_search: false } })
  t.equal(data(off).embeddings, undefined)
  const noted: SemanticSearch = { ...f.semantic, status: () => ({ ...f.semantic.status(), state: 'embedding', vectors: 1 }) }
  t.match(textOf(await search({ ...f, semantic: noted }, { query: 'retry' })), /\nNote: 1 of \d+ chunks have vectors — the rest are being embedded in the background; the others are found by their words only\.\n/)
  const unknown: SemanticSearch = { ...f.semantic, status: () => ({ ...f.semantic.status(), state: 'failed' }) }
  t.match(textOf(await search({ ...f, semantic: unknown }, { query: 'retry' })), /embedding is paused \(unknown error\)/)
})
