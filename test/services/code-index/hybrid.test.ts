import t from 'tap'
import { COORDINATION, FILE_EVIDENCE_WEIGHT, rankChunks } from '../../../src/services/code-index/chunk-ranking.js'
import { hybridSearch, type VectorSide } from '../../../src/services/code-index/hybrid.js'
import { fuseScores, LEXICAL_WEIGHT, MEANING_FROM_SD, MEANING_FULL_SD } from '../../../src/services/code-index/rank-fusion.js'
import type { ChunkRow } from '../../../src/services/code-index/index-schema.js'

// Hybrid search on its own: two rankings fused by score, similarity kept where a vector matched, stale ids passed by;
// and the orderings it rests on.

const row = (id: number, score = -1): ChunkRow => ({ id, path: `/w/f${id}.ts`, start: 1, end: 2, kind: 'function', symbol: `f${id}`, score })

t.test('both rankings fuse; a chunk rewritten since the vectors were loaded is passed by; depth says whether more ranks below', async (t) => {
  const asked: unknown[] = []
  const vectors: VectorSide = {
    embedQuery: async (text) => { asked.push(text); return new Float32Array([1]) },
    nearest: async (_vector, _scope, k) => ({ hits: [{ id: 2, similarity: 0.9 }, { id: 987654, similarity: 0.8 }, { id: 1, similarity: 0.5 }].slice(0, k), mean: 0.1, sd: 0.1 })
  }
  const index = {
    searchChunks: (terms: readonly string[]) => terms.length > 0 ? [row(1, -10), row(3, -2)] : [],
    chunksById: (ids: number[]) => ids.filter(id => id <= 3).map(row)
  }
  const ranking = await hybridSearch(vectors, index, { text: 'retry the upload', terms: ['retry', 'upload'] }, undefined, 3, new AbortController().signal)

  t.same(asked, ['retry the upload'], 'the text is embedded, not the terms')
  t.same(ranking.hits.map(hit => hit.id), [1, 2, 3], 'the words\' sure first answer (also found by meaning) first, then the nearest, then a weak word match')
  t.notOk(ranking.hits.some(hit => hit.id === 987654), 'an id the index no longer holds is left out')
  t.match(ranking.hits, [{ id: 1, similarity: 0.5 }, { id: 2, similarity: 0.9 }, { id: 3 }])
  t.equal(ranking.hits[2].similarity, undefined, 'a chunk found by its words alone has no similarity')
  t.equal(ranking.deeper, true, 'the vectors filled the depth asked for')

  const wordless = await hybridSearch(vectors, index, { text: '!! ?', terms: [] }, undefined, 5, new AbortController().signal)
  t.same(wordless.hits.map(hit => hit.id), [2, 1], 'no words: by meaning alone')
  t.equal(wordless.deeper, false)
})

t.test('score fusion: a first answer the words are sure of stays first; the meaning decides between weak word matches', async (t) => {
  const words = [{ id: 1, score: -20 }, { id: 2, score: -5 }, { id: 3, score: -4.9 }]
  const near = { hits: [{ id: 3, similarity: 0.9 }, { id: 4, similarity: 0.8 }, { id: 1, similarity: 0.1 }], mean: 0.3, sd: 0.1 }
  const fused = fuseScores(words, near)
  t.same(fused.map(f => f.id), [1, 3, 4, 2], 'BM25\'s clear winner first though the meaning puts it last; 3 passes 2 on its meaning, and so does 4, which no word found')
  t.equal(fused[0].score, LEXICAL_WEIGHT, 'the best word score counts LEXICAL_WEIGHT; a chunk below the mean adds nothing')
  t.ok(fused.every((f, i) => i === 0 || fused[i - 1].score >= f.score), 'best first')
  t.same(fuseScores([], { hits: [{ id: 7, similarity: 0.3 }], mean: 0, sd: 0.01 }).map(f => [f.id, f.score]), [[7, 1 - LEXICAL_WEIGHT]], 'one vector far above the rest: its full share')
  t.same(fuseScores([{ id: 5, score: -1 }, { id: 6, score: -1 }], { hits: [], mean: 0, sd: 0 }).map(f => f.id), [5, 6], 'a tie keeps the smaller id first')
  t.same(fuseScores(words, near, 0).slice(0, 2).map(f => f.id), [3, 4], 'with no weight on words, meaning alone decides')
})

t.test('the meaning counts by how far a chunk stands out from every chunk searched, not by its place among the nearest', async (t) => {
  const words = [{ id: 1, score: -10 }]
  const at = (mean: number, sd: number) => fuseScores(words, { hits: [{ id: 2, similarity: 0.5 }], mean, sd }).find(f => f.id === 2)?.score
  const near = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-9
  t.ok(near(at(0.5 - MEANING_FULL_SD * 0.05, 0.05), 1 - LEXICAL_WEIGHT), `${MEANING_FULL_SD} deviations above the mean: the meaning's full share`)
  t.equal(at(0.5 - (MEANING_FULL_SD + 2) * 0.05, 0.05), 1 - LEXICAL_WEIGHT, 'further: no more than that')
  t.ok(near(at(0.5 - MEANING_FROM_SD * 0.05, 0.05), 0), `${MEANING_FROM_SD} deviations: nothing yet`)
  t.ok(near(at(0.5 - (MEANING_FROM_SD + MEANING_FULL_SD) / 2 * 0.05, 0.05), (1 - LEXICAL_WEIGHT) / 2), 'halfway between: half its share')
  t.equal(at(0.45, 0.05), 0, 'the nearest chunk of a model that tells nothing apart adds nothing (the old min–max scaling gave it the full share)')
  t.equal(at(0.5, 0), 0, 'no spread (one chunk searched): nothing')
  t.same(fuseScores([], { hits: [{ id: 9, similarity: 0.5 }, { id: 3, similarity: 0.4 }], mean: 0.45, sd: 0.1 }).map(f => f.id), [9, 3],
    'chunks no word found and the meaning does not lift keep the meaning\'s order, not the ids\'')
})

t.test('chunk ranking: coordination and file evidence, then BM25; deterministic', async (t) => {
  const rows: ChunkRow[] = [
    { ...row(1, -7), path: '/w/noise.c' }, // one word, many times: BM25's best
    { ...row(2, -6), path: '/w/answer.c' }, // every word
    { ...row(3, -5), path: '/w/answer.c' }, // the same file matches again
    { ...row(4, -5), path: '/w/other.c' }
  ]
  const held = new Map([[1, 1], [2, 3], [3, 2], [4, 2]])
  const ranked = rankChunks(rows, id => held.get(id) as number, 3)
  t.same(ranked.map(r => r.id), [2, 3, 4, 1], 'the chunk with every word first, its file\'s other chunk next')
  t.equal(ranked[0].score, -6 + FILE_EVIDENCE_WEIGHT * (-6 + -5 * (2 / 3) ** COORDINATION), 'coordinated score plus the file\'s evidence')
  t.same(rankChunks(rows, () => 0, 0).map(r => r.id), [1, 2, 3, 4], 'no words counted: BM25 and evidence alone')
  t.same(rankChunks([{ ...row(9, -1), path: '/a' }, { ...row(8, -1), path: '/b' }], () => 1, 1).map(r => r.id), [8, 9], 'a tie keeps the smaller id first')
})
