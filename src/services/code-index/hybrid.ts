import type { CodeIndex } from './code-index.js'
import type { ChunkRow, PathScope } from './index-schema.js'
import { fuseScores } from './rank-fusion.js'
import type { NearestSet } from './vector-matrix.js'

/** A chunk of a hybrid ranking: its row, its fused score, and its similarity to the query when it has a vector. */
export interface HybridHit extends ChunkRow {
  fused: number
  similarity?: number
}

/** A hybrid ranking, best first. */
export interface HybridRanking {
  hits: HybridHit[]
  /** One of the two rankings reached the depth asked for: more chunks may rank below. */
  deeper: boolean
}

/** What a hybrid search asks of the vectors. */
export interface VectorSide {
  embedQuery(text: string, signal: AbortSignal): Promise<Float32Array>
  nearest(vector: Float32Array, scope: PathScope, k: number): Promise<NearestSet>
}

/**
 * Chunks by meaning (nearest vectors) and by words (BM25 over `terms`), `depth` deep each, fused by score (see
 * fuseScores). The vector thread compares while this thread ranks by words; a chunk rewritten since the vectors were
 * loaded is gone from the index and left out.
 */
export async function hybridSearch (
  vectors: VectorSide,
  index: Pick<CodeIndex, 'searchChunks' | 'chunksById'>,
  query: { text: string, terms: readonly string[] },
  scope: PathScope,
  depth: number,
  signal: AbortSignal
): Promise<HybridRanking> {
  const vector = await vectors.embedQuery(query.text, signal)
  const nearing = vectors.nearest(vector, scope, depth)
  const words = query.terms.length > 0 ? index.searchChunks(query.terms, scope, depth) : []
  const near = await nearing
  const rows = new Map(words.map(row => [row.id, row]))
  for (const row of index.chunksById(near.hits.map(n => n.id).filter(id => !rows.has(id)))) rows.set(row.id, row)
  const hits: HybridHit[] = []
  for (const { id, score, similarity } of fuseScores(words, near)) {
    const row = rows.get(id)
    if (row === undefined) continue
    hits.push({ ...row, fused: score, ...(similarity !== undefined ? { similarity } : {}) })
  }
  return { hits, deeper: near.hits.length >= depth || words.length >= depth }
}
