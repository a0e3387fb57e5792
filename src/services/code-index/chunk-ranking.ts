import type { ChunkRow } from './index-schema.js'

/**
 * How many chunks BM25 ranks before the rest of the ranking looks at them. Fixed, so that a page's order never
 * depends on how deep the page is; chunks below it follow in BM25's order.
 */
export const CANDIDATES = 500
/** Chunks holding every word that make enough candidates on their own (then those holding some are not ranked). */
export const ALL_WORDS_ENOUGH = 100
/** A file's evidence: the scores of its best chunks, this many. */
export const FILE_EVIDENCE_CHUNKS = 5
/** How much a file's evidence adds to each of its chunks' score. */
export const FILE_EVIDENCE_WEIGHT = 0.2
/** How hard coordination bites: a chunk's score is scaled by (share of the words it holds) to this power. */
export const COORDINATION = 0.5

/**
 * Orders BM25 candidates (score below 0, lower is better) by what BM25 alone misses: each score is scaled by the
 * share of the query's words its chunk holds (coordination — a question's words together outweigh one word
 * repeated), then moved by its file's evidence (a file that answers holds several chunks that match). The
 * constants were chosen on the retrieval bench's 65 tuning questions over two trees (bench/README.md): MRR@10
 * 0.74 with BM25 alone, 0.81 with both.
 */
export function rankChunks (rows: readonly ChunkRow[], wordsHeld: (id: number) => number, words: number): ChunkRow[] {
  const coordinated = rows.map(row => ({ ...row, score: row.score * (words === 0 ? 1 : (wordsHeld(row.id) / words) ** COORDINATION) }))
  const best = new Map<string, number[]>()
  for (const row of [...coordinated].sort((a, b) => a.score - b.score)) {
    const scores = best.get(row.path) ?? []
    if (scores.length < FILE_EVIDENCE_CHUNKS) scores.push(row.score)
    best.set(row.path, scores)
  }
  const evidence = new Map([...best].map(([path, scores]) => [path, scores.reduce((sum, s) => sum + s, 0)]))
  return coordinated
    .map(row => ({ ...row, score: row.score + FILE_EVIDENCE_WEIGHT * (evidence.get(row.path) as number) }))
    .sort((a, b) => a.score - b.score || a.id - b.id)
}
