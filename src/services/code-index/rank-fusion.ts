import type { NearestSet } from './vector-matrix.js'

/**
 * How much the words count against the meaning in a fused ranking. Measured on the retrieval bench with a
 * sentence model (bench/README.md): rank-only fusion (RRF) cost BM25's right first answers (MRR@10 0.83 → 0.71);
 * scores kept them. Since the model reads chunks prose first (embeddedChunk) its vectors alone went 0.30 → 0.42
 * on the 110 tuning questions of four trees, and the meaning earns a larger share: 0.7 for the words, the meaning
 * from 2 to 5 deviations, search_semantic 0.71 → 0.73 (a flat region: 0.6–0.8 and 1.5–2.5 / 4–5 all give 0.72–0.73).
 */
export const LEXICAL_WEIGHT = 0.7

/**
 * Where a chunk's meaning starts to count, and where it counts in full: its similarity this many standard
 * deviations above the mean similarity of every chunk searched. A model that tells one chunk from the rest puts it
 * far above; scaling between the least and the most similar of the top chunks instead stretched the meaning to
 * 0–1 even when the model could tell nothing apart, and the fused ranking fell below the better of its two inputs
 * on 8 of the bench's 65 tuning questions (4 with this; bench/README.md). Chunks stand out less from a small tree
 * than from a large one (the farthest of 2,000 is ~3.4 deviations out, of 20,000 ~3.9): from 2 the meaning counts
 * in trees of every size the bench asks.
 */
export const MEANING_FROM_SD = 2
/** See MEANING_FROM_SD. */
export const MEANING_FULL_SD = 5

/** An item of a fused ranking. */
export interface Fused {
  id: number
  /** Between 0 and 1; higher is better. */
  score: number
  /** The chunk's cosine similarity to the query, when the meaning's ranking held it. */
  similarity?: number
}

/**
 * Fuses a ranking by words (BM25 scores below 0, lower is better, best first) with one by meaning (cosine
 * similarities, best first, and their spread over every chunk searched), by score rather than by rank: the words
 * scaled against the best score, the meaning by how far each chunk stands out (MEANING_FROM_SD), weighed
 * (LEXICAL_WEIGHT). A first answer the words are sure of stays first unless the meaning strongly disagrees. Equal
 * scores go to the more similar, then the smaller id — so chunks no word found keep the meaning's order.
 */
export function fuseScores (words: ReadonlyArray<{ id: number, score: number }>, near: NearestSet, lexical = LEXICAL_WEIGHT): Fused[] {
  const fused = new Map<number, Fused>()
  const best = words[0]?.score ?? -1
  for (const { id, score } of words) fused.set(id, { id, score: lexical * (score / best) })
  for (const { id, similarity } of near.hits) {
    const standing = near.sd === 0 ? 0 : (similarity - near.mean) / near.sd
    const scaled = Math.min(1, Math.max(0, (standing - MEANING_FROM_SD) / (MEANING_FULL_SD - MEANING_FROM_SD)))
    fused.set(id, { id, score: (fused.get(id)?.score ?? 0) + (1 - lexical) * scaled, similarity })
  }
  // Below any cosine (−1…1): chunks found by words alone sort after those with a similarity on equal scores.
  const similarityOf = (f: Fused): number => f.similarity ?? -2
  return [...fused.values()].sort((a, b) => b.score - a.score || similarityOf(b) - similarityOf(a) || a.id - b.id)
}
