import t from 'tap'
import { hybridSearch, type VectorSide } from '../../../src/services/code-index/hybrid.js'
import type { ChunkRow } from '../../../src/services/code-index/index-schema.js'

// Hybrid search on its own: two rankings fused, similarity kept where a vector matched, stale ids passed by.

const row = (id: number): ChunkRow => ({ id, path: `/w/f${id}.ts`, start: 1, end: 2, kind: 'function', symbol: `f${id}`, score: 1 })

t.test('both rankings fuse; a chunk rewritten since the vectors were loaded is passed by; depth says whether more ranks below', async (t) => {
  const asked: unknown[] = []
  const vectors: VectorSide = {
    embedQuery: async (text) => { asked.push(text); return new Float32Array([1]) },
    nearest: async (_vector, _scope, k) => [{ id: 2, similarity: 0.9 }, { id: 987654, similarity: 0.8 }, { id: 1, similarity: 0.5 }].slice(0, k)
  }
  const index = {
    searchChunks: (terms: readonly string[]) => terms.length > 0 ? [row(1), row(3)] : [],
    chunksById: (ids: number[]) => ids.filter(id => id <= 3).map(row)
  }
  const ranking = await hybridSearch(vectors, index, { text: 'retry the upload', terms: ['retry', 'upload'] }, undefined, 3, new AbortController().signal)

  t.same(asked, ['retry the upload'], 'the text is embedded, not the terms')
  t.same(ranking.hits.map(hit => hit.id), [1, 2, 3], 'found both ways first, then by rank in either')
  t.notOk(ranking.hits.some(hit => hit.id === 987654), 'an id the index no longer holds is left out')
  t.match(ranking.hits, [{ id: 1, similarity: 0.5 }, { id: 2, similarity: 0.9 }, { id: 3 }])
  t.equal(ranking.hits[2].similarity, undefined, 'a chunk found by its words alone has no similarity')
  t.equal(ranking.deeper, true, 'the vectors filled the depth asked for')

  const wordless = await hybridSearch(vectors, index, { text: '!! ?', terms: [] }, undefined, 5, new AbortController().signal)
  t.same(wordless.hits.map(hit => hit.id), [2, 1], 'no words: by meaning alone')
  t.equal(wordless.deeper, false)
})
