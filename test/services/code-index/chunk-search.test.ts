import path from 'node:path'
import t, { type Test } from 'tap'
import { ALL_WORDS_ENOUGH, CANDIDATES } from '../../../src/services/code-index/chunk-ranking.js'
import { searchTokens } from '../../../src/services/code-index/code-tokens.js'
import { loadSqlite, type FileEntry } from '../../../src/services/code-index/index-schema.js'
import { openIndexReader, type IndexReader } from '../../../src/services/code-index/index-reader.js'
import { openIndexWriter } from '../../../src/services/code-index/index-writer.js'
import { tempDir } from '../../helpers/workspace-fixture.js'

// Which chunks a ranked search considers: those holding every word when they are enough, else the best holding
// any; the candidates re-ordered (coordination, file evidence), the chunks past them after, in BM25's order.

const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>

/** One file of `count` chunks, each holding `words` (as the index stores them). */
const file = (name: string, count: number, words: string): FileEntry => ({
  path: `/r/${name}`,
  size: 1,
  mtimeMs: 1,
  language: 'C',
  symbols: [],
  chunks: Array.from({ length: count }, (_, i) => ({ start: i + 1, end: i + 1, symbol: '', kind: 'code', fields: { name: '', head: '', path: name, body: searchTokens(words).join(' ') }, hash: `${name}-${i}` }))
})

async function store (t: Test, entries: FileEntry[]): Promise<IndexReader> {
  const at = path.join(tempDir(t, 'wmcp-chunk-search-'), 'index.sqlite')
  const writer = openIndexWriter(sqlite, at)
  await writer.write(entries)
  writer.close()
  const reader = openIndexReader(sqlite, at) as IndexReader
  t.teardown(() => reader.close())
  return reader
}

t.test('enough chunks hold every word: only they are ranked; deeper pages add those holding some, in order', async (t) => {
  const reader = await store(t, [file('both.c', ALL_WORDS_ENOUGH + 20, 'free pages'), file('one.c', 30, 'free free free free')])
  const first = reader.searchChunks(['free', 'pages'], undefined, 11)
  t.equal(first.length, 11)
  t.ok(first.every(row => row.path === '/r/both.c'), 'the chunks with both words first, though one word many times scores higher alone')
  const all = reader.searchChunks(['free', 'pages'], undefined, 1000)
  t.equal(all.length, ALL_WORDS_ENOUGH + 50, 'every chunk, once')
  t.equal(new Set(all.map(row => row.id)).size, all.length)
  t.same(all.slice(0, 11).map(row => row.id), first.map(row => row.id), 'a deeper page never reorders the first')
  t.ok(all.slice(ALL_WORDS_ENOUGH + 20).every(row => row.path === '/r/one.c'), 'then those holding one word')
})

t.test('too few hold every word: the best of those holding any are ranked, and those past the candidates follow', async (t) => {
  const reader = await store(t, [file('both.c', 3, 'free pages'), file('one.c', CANDIDATES + 5, 'pages')])
  const rows = reader.searchChunks(['free', 'pages'], undefined, CANDIDATES + 8)
  t.equal(rows.length, CANDIDATES + 8)
  t.same(rows.slice(0, 3).map(row => row.path), ['/r/both.c', '/r/both.c', '/r/both.c'], 'the chunks with every word first')
  t.same(reader.searchChunks(['pages'], undefined, 2).map(row => row.path), ['/r/one.c', '/r/one.c'], 'one word: the chunks where it weighs most (BM25: shorter ones) first, in the file with most evidence')
  t.same(reader.searchChunks([], undefined, 5), [], 'no word, no chunk')
})
