import { existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
// @ts-expect-error -- bench/ is plain JavaScript without type declarations
import { indexFileIn, keepVectors, seedVectors } from '../../bench/lib/retrieval-vectors.js'
import { loadSqlite, SCHEMA, SCHEMA_VERSION, schemaOf } from '../../src/services/code-index/index-schema.js'

// The retrieval bench keeps its vectors when a server would rebuild the index of a tree (another schema version),
// and gives another build's server the vectors of the main state folder: embedding a tree again takes the shared
// model half an hour.

const sqlite = loadSqlite()
const NAME = 'index-0123456789abcdef.sqlite'
const schema = { SCHEMA, SCHEMA_VERSION, schemaOf }

/** An index file of `version` in `dir` holding vectors for these hashes (and one chunk, which must not survive). */
function indexWith (dir: string, version: string, hashes: string[]): string {
  const file = path.join(dir, NAME)
  const db = new sqlite!.DatabaseSync(file)
  db.exec(SCHEMA)
  db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?)").run(version)
  db.exec("INSERT INTO files (path, size, mtime, language) VALUES ('/x/a.c', 1, 1, 'c')")
  db.exec("INSERT INTO chunks (file, start, end, symbol, kind, hash) VALUES (1, 1, 1, 'a', 'function', 'h1')")
  for (const hash of hashes) db.prepare("INSERT INTO vectors (hash, model, dims, vector) VALUES (?, 'm', 2, ?)").run(hash, new Uint8Array(new Float32Array([1, 0]).buffer))
  db.close()
  return file
}
const contents = (file: string): { version: string | undefined, hashes: string[], chunks: number } => {
  const db = new sqlite!.DatabaseSync(file, { readOnly: true })
  try {
    return { version: schemaOf(db), hashes: (db.prepare('SELECT hash FROM vectors ORDER BY hash').all() as Array<{ hash: string }>).map(r => r.hash), chunks: (db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n }
  } finally {
    db.close()
  }
}

t.test('an index of another schema version becomes an empty one of this schema holding every cached vector', async (t) => {
  const dir = t.testdir({ state: {}, other: {} })
  const state = path.join(dir, 'state')
  const cache = path.join(dir, 'vectors', 'tree.sqlite')
  // An earlier run's index kept h0 in the cache; the present one (another schema) holds h1 and h2.
  indexWith(path.join(dir, 'other'), SCHEMA_VERSION, ['h0'])
  t.equal(await keepVectors(path.join(dir, 'other'), cache), 1)
  const file = indexWith(state, 'old', ['h1', 'h2'])
  t.equal(await seedVectors(state, cache, schema), 3)
  t.same(contents(file), { version: SCHEMA_VERSION, hashes: ['h0', 'h1', 'h2'], chunks: 0 }, 'its vectors and the cached ones, no chunk: the scan writes them')
  t.equal(await seedVectors(state, cache, schema), undefined, 'an index of this schema is left alone')
  t.equal(await keepVectors(state, cache), 3, 'kept again: nothing twice')
})

t.test('another build gets an index named as the main state folder\'s, holding the cached vectors; nothing to go by, nothing is made', async (t) => {
  const dir = t.testdir({ main: {}, empty: {} })
  const cache = path.join(dir, 'vectors.sqlite')
  const main = indexWith(path.join(dir, 'main'), SCHEMA_VERSION, ['h1'])
  await keepVectors(path.join(dir, 'main'), cache)
  const other = path.join(dir, 'state-before', 'tree')
  t.equal(await seedVectors(other, cache, schema, indexFileIn(path.join(dir, 'main'))), 1)
  t.same(contents(path.join(other, NAME)), { version: SCHEMA_VERSION, hashes: ['h1'], chunks: 0 })
  t.equal(await seedVectors(path.join(dir, 'empty'), cache, schema), undefined)
  t.equal(indexFileIn(path.join(dir, 'empty')), undefined)
  t.equal(await keepVectors(path.join(dir, 'empty'), cache), 0, 'no index: nothing kept')
  t.equal(await seedVectors(path.join(dir, 'fresh'), path.join(dir, 'none.sqlite'), schema, main), 0, 'no cache yet: an empty index')
  t.ok(existsSync(path.join(dir, 'fresh', NAME)))
})
