/** The constant of reciprocal-rank fusion: how much the first places count more than the next ones. */
export const RRF_K = 60

/** An item of a fused ranking. */
export interface Fused {
  id: number
  /** Σ 1 / (RRF_K + rank) over the rankings that hold it (rank from 1); higher is better. */
  score: number
}

/**
 * Reciprocal-rank fusion (Cormack et al., 2009) of rankings of ids, best first: only ranks count, so scores of
 * different kinds (cosine, BM25) need no common scale. Equal scores keep the smaller id first: deterministic.
 */
export function fuseRankings (rankings: ReadonlyArray<readonly number[]>, k = RRF_K): Fused[] {
  const scores = new Map<number, number>()
  for (const ranking of rankings) {
    ranking.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1)))
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id)
}
