/**
 * How much the words count against the meaning in a fused ranking. Measured on the retrieval bench with a
 * sentence model (bench/README.md): rank-only fusion (RRF) cost BM25's right first answers (MRR@10 0.83 → 0.71);
 * scores with the words at 0.8 kept them.
 */
export const LEXICAL_WEIGHT = 0.8

/** An item of a fused ranking. */
export interface Fused {
  id: number
  /** Between 0 and 1; higher is better. */
  score: number
}

/**
 * Fuses a ranking by words (BM25 scores below 0, lower is better, best first) with one by meaning (cosine
 * similarities, best first), by score rather than by rank: each side is scaled to [0, 1] — words against the best
 * score, meaning between the least and the most similar found — and weighed (LEXICAL_WEIGHT). A first answer the
 * words are sure of stays first unless the meaning strongly disagrees. Equal scores keep the smaller id first.
 */
export function fuseScores (words: ReadonlyArray<{ id: number, score: number }>, near: ReadonlyArray<{ id: number, similarity: number }>, lexical = LEXICAL_WEIGHT): Fused[] {
  const scores = new Map<number, number>()
  const best = words[0]?.score ?? -1
  for (const { id, score } of words) scores.set(id, lexical * (score / best))
  const most = near[0]?.similarity ?? 1
  const least = near.at(-1)?.similarity ?? 0
  for (const { id, similarity } of near) {
    const scaled = most === least ? 1 : (similarity - least) / (most - least)
    scores.set(id, (scores.get(id) ?? 0) + (1 - lexical) * scaled)
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id)
}
