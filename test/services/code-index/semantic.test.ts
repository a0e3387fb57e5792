import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import pino from 'pino'
import t from 'tap'
import { chunkHash, chunkText, embeddedText, MAX_EMBED_CHARS } from '../../../src/services/code-index/chunk-text.js'
import type { CodeIndex } from '../../../src/services/code-index/code-index.js'
import { semanticService } from '../../../src/services/code-index/index.js'
import { indexedText } from '../../../src/services/code-index/indexed-lines.js'
import { loadConfig } from '../../../src/base/config.js'
import { openIndexWriter } from '../../../src/services/code-index/index-writer.js'
import { loadSqlite, type FileEntry } from '../../../src/services/code-index/index-schema.js'
import { createVectorMatrix } from '../../../src/services/code-index/vector-matrix.js'
import { openVectorStore } from '../../../src/services/code-index/vector-store.js'
import { vectorHandler } from '../../../src/services/code-index/vector-worker.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { startFakeEmbeddings } from '../../helpers/fake-embeddings.js'
import { runs } from '../../helpers/property.js'
import { inputs, semanticFixture, settled, signal } from '../../helpers/semantic-fixture.js'
import { tempDir } from '../../helpers/workspace-fixture.js'
import { waitUntil } from '../../helpers/wait.js'

const log = pino({ level: 'silent' })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const unit = (v: number[]): Float32Array => Float32Array.from(fakeUnit(v))
const fakeUnit = (v: number[]): number[] => { const n = Math.hypot(...v); return n === 0 ? v : v.map(x => x / n) }

t.test('chunk text: CRs and a byte-order mark dropped, hashed by content, cut for the model on a character boundary', async (t) => {
  t.equal(chunkText(['\uFEFFa\r', 'b\r', 'c'], 1, 2), 'a\nb')
  t.equal(chunkText(['a', 'b', 'c'], 2, 3), 'b\nc')
  t.equal(chunkHash('a\nb'), chunkHash(chunkText(['a\r', 'b'], 1, 2)), 'CRLF and LF files give one hash')
  t.not(chunkHash('a'), chunkHash('b'))
  t.match(chunkHash('x'), /^[0-9a-f]{32}$/)
  t.equal(embeddedText('short'), 'short')
  t.equal(embeddedText('x'.repeat(MAX_EMBED_CHARS + 5)).length, MAX_EMBED_CHARS)
  const pair = 'x'.repeat(MAX_EMBED_CHARS - 1) + '😀tail'
  t.equal(embeddedText(pair).length, MAX_EMBED_CHARS - 1, 'a surrogate pair is never split')
})

t.test('the vector matrix: exact nearest neighbours, ties by id, file filter, grows past its first block', async (t) => {
  const m = createVectorMatrix(2)
  t.same(m.nearest(unit([1, 0]), 3), { hits: [], mean: 0, sd: 0 }, 'empty')
  m.add(10, 1, unit([1, 0]))
  m.add(7, 1, unit([1, 0]))
  m.add(3, 2, unit([0, 1]))
  m.add(4, 2, unit([-1, 0]))
  t.same(m.nearest(unit([1, 0]), 2).hits.map(n => n.id), [7, 10], 'equal similarity: smaller chunk id first')
  t.same(m.nearest(unit([1, 0]), 10).hits.map(n => n.id), [7, 10, 3, 4])
  t.same(m.nearest(unit([1, 0]), 10, file => file === 2).hits.map(n => n.id), [3, 4], 'only admitted files')
  t.match(m.nearest(unit([1, 0]), 1), { mean: 0.25, sd: Math.sqrt(0.75 - 0.0625) }, 'the spread of the similarity over every row searched (1, 1, 0, -1), not only the nearest')
  t.match(m.nearest(unit([1, 0]), 1, file => file === 2), { mean: -0.5, sd: 0.5 }, 'over the admitted rows only')
  m.clear()
  t.equal(m.size, 0)
  const five = createVectorMatrix(5)
  for (let i = 1; i <= 6; i++) five.add(i * 10, i, unit([i, 1, 0, 0, i % 2]))
  t.equal(five.retain(chunk => chunk % 20 !== 0), 3, 'rows of chunks gone are dropped')
  t.same([five.size, five.maxChunk, five.has(20), five.has(30)], [3, 60, false, true])
  t.same(five.nearest(unit([5, 1, 0, 0, 1]), 3).hits.map(n => n.id), [50, 30, 10], 'the rows kept moved up with their vectors (five dimensions: the unrolled sums and the rest)')
  for (let i = 0; i < 3000; i++) m.add(i, 0, unit(i === 2999 ? [0, 1] : [1, 0]))
  t.equal(m.size, 3000, 'grown twice past its first block')
  t.same(m.nearest(unit([0, 1]), 1).hits.map(n => n.id), [2999], 'rows added after a growth keep their place')
  fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: -5, max: 5 }), fc.integer({ min: -5, max: 5 }), fc.integer({ min: -5, max: 5 })), { minLength: 1, maxLength: 2500 }), fc.integer({ min: 1, max: 30 }), (rows, k) => {
    const matrix = createVectorMatrix(3)
    const vectors = rows.map(r => unit(r))
    vectors.forEach((v, i) => matrix.add(i, i % 7, v))
    const query = unit([1, 2, 3])
    const dot = (v: Float32Array): number => { let s = 0; for (let d = 0; d < 3; d++) s += v[d] * query[d]; return s }
    const naive = vectors.map((v, id) => ({ id, similarity: dot(v) })).sort((a, b) => b.similarity - a.similarity || a.id - b.id).slice(0, k)
    const { hits: got, mean, sd } = matrix.nearest(query, k)
    const all = vectors.map(dot)
    const naiveMean = all.reduce((sum, x) => sum + x, 0) / all.length
    const naiveSd = Math.sqrt(all.reduce((sum, x) => sum + (x - naiveMean) ** 2, 0) / all.length)
    return matrix.size === rows.length && got.length === naive.length && got.every((n, i) => n.id === naive[i].id && Math.abs(n.similarity - naive[i].similarity) < 1e-6) &&
      Math.abs(mean - naiveMean) < 1e-6 && Math.abs(sd - naiveSd) < 1e-5
  }), runs(40))
})

function entry (file: string, hashes: string[]): FileEntry {
  return { path: file, size: 1, mtimeMs: 1, language: 'TypeScript', symbols: [], chunks: hashes.map((hash, i) => ({ start: i + 1, end: i + 1, symbol: '', kind: 'code', fields: { name: '', head: '', path: '', body: 'w' }, hash })) }
}

t.test('the vector thread\'s work: chunks without vectors by cursor, vectors by content hash, reload and prune, scoped search', async (t) => {
  const file = path.join(tempDir(t, 'wmcp-vectors-'), 'index.sqlite')
  const store = openIndexWriter(sqlite, file)
  t.teardown(() => store.close())
  await store.write([entry('/r/src/a.ts', ['ha', 'hb']), entry('/r/lib/b.ts', ['ha', 'hc'])])
  const vectors = openVectorStore(sqlite, file)
  t.teardown(() => vectors.close())
  const handle = vectorHandler(vectors)
  t.throws(() => handle({ missing: { after: 0, examine: 10 } }), /not configured/)
  t.same(handle({ configure: { model: 'm', dims: 2 } }), { vectors: 0 })
  const missing = handle({ missing: { after: 0, examine: 3 } }).rows ?? []
  t.same(missing.map(r => [r.hash, r.path, r.start]), [['ha', '/r/src/a.ts', 1], ['hb', '/r/src/a.ts', 2], ['ha', '/r/lib/b.ts', 1]])
  t.same(handle({ missing: { after: missing[2].id, examine: 3 } }).rows?.map(r => r.hash), ['hc'], 'the cursor goes on after the last id')
  t.same(handle({ put: [{ hash: 'ha', vector: unit([1, 0]) }] }), { vectors: 2 }, 'one vector serves both chunks with that text')
  t.same(handle({ missing: { after: 0, examine: 10 } }).rows?.map(r => r.hash), ['hb', 'hc'])
  handle({ put: [{ hash: 'hb', vector: unit([0, 1]) }, { hash: 'hc', vector: unit([1, 1]) }] })
  const all = handle({ search: { vector: unit([1, 0]), k: 10 } }).near?.hits ?? []
  t.equal(all.length, 4)
  t.ok(Math.abs(all[0].similarity - 1) < 1e-6)
  const scoped = handle({ search: { vector: unit([1, 0]), k: 10, scope: '/r/lib' } }).near?.hits ?? []
  t.same(new Set(scoped.map(h => h.id)), new Set(missing.filter(r => r.path.startsWith('/r/lib/')).map(r => r.id).concat(handle({ search: { vector: unit([1, 1]), k: 1, scope: '/r/lib/b.ts' } }).near?.hits?.map(h => h.id) ?? [])), 'only chunks under the scope')
  t.same(handle({ search: { vector: unit([1, 0]), k: 10, scope: '/r/li' } }).near?.hits, [], 'a scope is a folder, not a prefix of names')
  // A file written after the load: its chunk joins when its text's vector is stored.
  await store.write([entry('/r/new.ts', ['hd'])])
  t.same(handle({ put: [{ hash: 'hd', vector: unit([0, 1]) }] }), { vectors: 5 })
  t.equal(handle({ search: { vector: unit([0, 1]), k: 10, scope: '/r/new.ts' } }).near?.hits?.length, 1, 'its path is known to scoped searches')
  await store.remove(['/r/src/a.ts', '/r/new.ts'])
  // lib/b.ts moved: written again, its chunks get new (higher) ids with the same texts.
  await store.remove(['/r/lib/b.ts'])
  await store.write([entry('/r/moved/b.ts', ['ha', 'hc'])])
  t.same(handle({ refresh: true }), { vectors: 2, pruned: 2, removed: 5 }, 'hb and hd no longer in any chunk: pruned; the rows of every chunk gone dropped, the moved chunks loaded with their vectors')
  t.same(handle({ search: { vector: unit([1, 0]), k: 10, scope: '/r/moved' } }).near?.hits?.length, 2, 'under their new path')
  t.same(handle({ missing: { after: 0, examine: 10 } }), { vectors: 2, rows: [], last: Math.max(...(handle({ search: { vector: unit([1, 0]), k: 10 } }).near?.hits ?? []).map(h => h.id)) }, 'nothing is missing')
  t.same(handle({ missing: { after: 1e9, examine: 10 } }), { vectors: 2, rows: [] }, 'past the last chunk: no last')
  // A chunk whose text got a vector since the last load (another thread stored it) joins when it is examined.
  await store.write([entry('/r/copy.ts', ['ha', 'he'])])
  vectors.put('m', 2, [{ hash: 'he', vector: unit([0, 1]) }], () => {})
  t.same(handle({ missing: { after: 0, examine: 10 } }).rows, [], 'both texts of the new file have vectors: nothing to embed')
  t.equal(handle({ search: { vector: unit([1, 0]), k: 10 } }).near?.hits?.length, 4)
  t.same(handle({ configure: { model: 'other', dims: 2 } }), { vectors: 0 }, 'another model has none')
  vectors.put('m', 2, [{ hash: 'h-nowhere', vector: unit([1, 0]) }], () => t.fail('a text no chunk holds joins nothing'))
  t.throws(() => vectors.put('m', 2, [{ hash: null as unknown as string, vector: unit([1, 0]) }], () => t.fail('a failed batch reports nothing')))
})

t.test('a chunk without a vector comes with the names of the definitions that start in it, in line order', async (t) => {
  const file = path.join(tempDir(t, 'wmcp-vectors-'), 'index.sqlite')
  const store = openIndexWriter(sqlite, file)
  t.teardown(() => store.close())
  const symbol = (name: string, line: number): FileEntry['symbols'][number] => ({ kind: 'function', name, line, endLine: line, depth: 1, signature: name })
  await store.write([{ ...entry('/r/a.ts', ['ha']), chunks: [{ start: 1, end: 3, symbol: 'first', kind: 'function', fields: { name: '', head: '', path: '', body: 'w' }, hash: 'ha' }, { start: 4, end: 4, symbol: '', kind: 'code', fields: { name: '', head: '', path: '', body: 'w' }, hash: 'hb' }], symbols: [symbol('second', 3), symbol('first', 1), symbol('later', 9)] }])
  const vectors = openVectorStore(sqlite, file)
  t.teardown(() => vectors.close())
  t.same(vectors.chunksAfter(0, 10).map(r => [r.symbol, r.names]), [['first', 'first second'], ['', '']])
})

t.test('semantic search: every chunk embedded once per text, nearest vector first (the fake hashes words: texts sharing identifiers are near), in scope; moves never re-embed, changes only what changed', async (t) => {
  const s = await semanticFixture(t)
  t.match(s.semantic.status(), { state: 'waiting', vectors: 0, model: 'fake' }, 'nothing before the index\'s first scan')
  t.same(await s.semantic.nearest(unit([1]), undefined, 5), { hits: [], mean: 0, sd: 0 }, 'no index open: nothing near')
  t.same(s.index.chunksById([1]), [], 'and no chunk')
  await settled(s)
  const chunks = s.index.status().chunks
  t.same(s.index.chunksById([]), [])
  t.match(s.semantic.status(), { state: 'ready', vectors: chunks, dims: 64, capped: false })
  t.equal(inputs(s.fake), chunks, 'the two copies of one function are one text: the probe of the vector length plus one per distinct text')
  t.equal(s.fake.requests[0].inputs[0], 'dimensions', 'the length was asked first')
  t.ok(s.fake.requests.flatMap(r => r.inputs).includes('src/upload: uploader (retry failed upload) retry each failed upload with backoff\nexport class uploader {\n async retry failed upload (path: string): promise<number> {\n return 3\n }\n}'),
    'the model reads a chunk prose first: its file, definition and names as words, its comment, then its code with identifiers as words')
  const query = await s.semantic.embedQuery('retry the failed upload', signal())
  const [best] = (await s.semantic.nearest(query, undefined, 3)).hits
  t.match(s.index.chunksById([best.id]), [{ path: path.join(s.root, 'src/upload.ts') }], 'the upload code is nearest')
  t.ok(best.similarity > 0.3)
  const crlf = (await s.semantic.nearest(await s.semantic.embedQuery('crlf lines carriage returns', signal()), undefined, 1)).hits
  t.match(s.index.chunksById(crlf.map(n => n.id)), [{ path: path.join(s.root, 'src/windows.ts') }], 'a CRLF file with a BOM has its vector: the texts read back hash alike')
  const scoped = (await s.semantic.nearest(query, path.join(s.root, 'lib'), 10)).hits
  t.same(s.index.chunksById(scoped.map(n => n.id)).map(c => c.path), [path.join(s.root, 'lib/copy.ts')], 'scope: only lib')

  const before = inputs(s.fake)
  fs.renameSync(path.join(s.root, 'src/config.py'), path.join(s.root, 'lib/settings.py'))
  await settled(s)
  t.equal(inputs(s.fake), before, 'a moved file is not embedded again')
  t.equal(s.semantic.status().vectors, s.index.status().chunks)
  fs.appendFileSync(path.join(s.root, 'src/upload.ts'), '\nexport function brandNewHelper () {\n  return "fresh"\n}\n')
  await settled(s)
  t.ok(inputs(s.fake) - before >= 1 && inputs(s.fake) - before <= 2, 'a change embeds only the chunks whose text changed')
  t.equal(s.semantic.status().vectors, s.index.status().chunks)
  const fresh = (await s.semantic.nearest(await s.semantic.embedQuery('brand new helper fresh', signal()), undefined, 1)).hits
  t.match(s.index.chunksById(fresh.map(n => n.id)), [{ path: path.join(s.root, 'src/upload.ts') }], 'and the new code is found')
  s.fake.options.dims = 8
  await t.rejects(s.semantic.embedQuery('now shorter', signal()), /the model fake answered a vector of 8 dimensions where it gave 64 before/, 'a model that changes its length under the server is an error, not a mixed index')
})

t.test('semantic search: Ollama\'s shape, a configured length (no probe), a cap, a refused chunk passed by', async (t) => {
  const s = await semanticFixture(t, { path: '/api/embed', settings: { dimensions: 16 }, fake: { refuse: 'carriage' } })
  await settled(s)
  t.match(s.semantic.status(), { state: 'ready', dims: 16 })
  t.notOk(s.fake.requests.some(r => r.inputs.includes('dimensions')), 'no probe when the length is configured')
  t.equal(s.semantic.status().vectors, s.index.status().chunks - 1, 'the chunk the provider refuses stays without a vector; the rest of its batch is embedded')
  const capped = await semanticFixture(t, { maxChunks: 2 })
  await settled(capped)
  t.match(capped.semantic.status(), { state: 'ready', capped: true })
  t.ok(capped.semantic.status().vectors >= 2 && capped.semantic.status().vectors < capped.index.status().chunks, 'stops at the cap, a batch past it at most')
})

t.test('semantic search: close() ends a run mid-way; a file gone is passed by', async (t) => {
  const slow = await semanticFixture(t, { fake: { delayMs: 300 }, settings: { dimensions: 64 } })
  await slow.index.ready(60_000, signal())
  await waitUntil(() => slow.fake.requests.length > 0, 'the run to ask the provider')
  t.equal(slow.semantic.status().state, 'embedding')
  await slow.semantic.close()
  t.equal(slow.semantic.status().state, 'embedding', 'closed mid-run: no failure recorded')

  const gone = await semanticFixture(t, { fake: { delayMs: 100 }, staleMs: 60_000 })
  await gone.index.ready(60_000, signal())
  fs.rmSync(path.join(gone.root, 'src/windows.ts'))
  fs.writeFileSync(path.join(gone.root, 'lib/copy.ts'), 'export function changed () { return 2 }\n')
  await waitUntil(() => gone.semantic.status().state !== 'embedding' && gone.semantic.status().state !== 'waiting', 'the run to end', 60_000)
  t.match(gone.semantic.status(), { state: 'ready', vectors: gone.index.status().chunks - 1 }, 'a file gone before its turn is passed by; a copy changed since is too, and the other copy of its text serves')
})

t.test('the semantic service: only with a URL and a code index; a provider elsewhere is announced as code leaving the machine', async (t) => {
  const lines: Array<{ level: number, msg: string, provider?: string }> = []
  const capture = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  const root = tempDir(t, 'wmcp-semantic-service-')
  const workspace = await createWorkspace({ root, log })
  const index = { onScanned: () => {} } as unknown as CodeIndex
  const config = (url: string): ReturnType<typeof loadConfig> => loadConfig({ embeddingsUrl: url, embeddingsModel: 'm' }, {}, root)
  t.equal(semanticService(loadConfig({}, {}, root), index, workspace, capture), undefined, 'no URL: not offered')
  t.equal(semanticService(config('http://127.0.0.1:9/v1'), undefined, workspace, capture), undefined, 'no code index: not offered')
  t.match(lines.at(-1), { level: 40, msg: /search_semantic needs the code index/ })
  t.ok(semanticService(config('http://127.0.0.1:9/v1'), index, workspace, capture))
  t.match(lines.at(-1), { level: 30, provider: 'http://127.0.0.1:9/v1/embeddings', msg: 'search_semantic: embeddings from a provider on this machine' })
  t.ok(semanticService(config('https://api.example.com/v1'), index, workspace, capture))
  t.match(lines.at(-1), { level: 40, provider: 'https://api.example.com/v1/embeddings', msg: 'search_semantic: chunks of the served code are sent to this embeddings provider' })
  fs.writeFileSync(path.join(root, 'big.ts'), 'x'.repeat(2 * 1024 * 1024 + 1))
  fs.writeFileSync(path.join(root, 'blob.ts'), Buffer.from([0, 1, 2, 0]))
  t.equal(await indexedText(workspace, path.join(root, 'big.ts'), signal()), undefined, 'grown past the size limit')
  t.equal(await indexedText(workspace, path.join(root, 'blob.ts'), signal()), undefined, 'binary now')
  t.equal(await indexedText(workspace, path.join(root, 'gone.ts'), signal()), undefined, 'gone')

  // A scan's end before the index file exists (a replica whose index is not published yet) starts no run.
  let scanned: (changed: number) => void = () => {}
  const noFile = { onScanned: (listener: (changed: number) => void) => { scanned = listener }, file: () => undefined } as unknown as CodeIndex
  const fake = await startFakeEmbeddings()
  t.teardown(() => fake.close())
  const semantic = semanticService(config(`${fake.url}/v1`), noFile, workspace, capture) as NonNullable<ReturnType<typeof semanticService>>
  scanned(3)
  t.equal(semantic.status().state, 'waiting')
  t.equal(fake.requests.length, 0, 'the provider was not asked')
  await semantic.close()
})
