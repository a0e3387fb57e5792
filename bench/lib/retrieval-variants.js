// Ranking techniques the retrieval issue asked for, replayed over a built index without changing the server: each
// takes one question's data (see retrieval-techniques.js) and a setting, and returns chunks best first.

/** Rank of the first answer file among the distinct files of the first 30 chunks (three pages of ten), else undefined. */
export function fileRank (chunks, answers) {
  const files = []
  for (const c of chunks.slice(0, 30)) if (!files.includes(c.path)) files.push(c.path)
  const i = files.findIndex(f => answers.includes(f))
  return i < 0 ? undefined : i + 1
}

/** Two word rankings (BM25 below 0, lower is better), each scaled by its best, mixed: `lambda` for the second. */
export function mixRankings (first, second, lambda) {
  const mixed = new Map()
  const b1 = first[0]?.score ?? -1
  const b2 = second[0]?.score ?? -1
  for (const r of first) mixed.set(r.id, { ...r, mix: (1 - lambda) * r.score / b1 })
  for (const r of second) {
    const prev = mixed.get(r.id)
    mixed.set(r.id, { ...(prev ?? r), mix: (prev?.mix ?? 0) + lambda * r.score / b2 })
  }
  return [...mixed.values()].sort((a, b) => b.mix - a.mix || a.id - b.id)
}

/**
 * Fusion of words and meaning as the server fuses (rank-fusion.ts: words scaled by the best score, weighed `lexical`;
 * the meaning from `from` to `full` standard deviations), with the words' weight scaled by how sure they are: the
 * largest share of the query's words any candidate holds, over `confidence`, to the power `power` (no confidence:
 * the server's fusion).
 */
export function confidenceFusion (q, { lexical, from, full, confidence, power = 1 }) {
  const { words, near } = q
  const fused = new Map()
  const best = words[0]?.score ?? -1
  const share = words.length === 0 ? 0 : Math.max(...words.map(w => w.held)) / q.groups
  const weight = lexical * (confidence === undefined ? 1 : Math.min(1, share / confidence) ** power)
  for (const w of words) fused.set(w.id, { ...w, f: weight * (w.score / best) })
  for (const n of near.hits) {
    const z = near.sd === 0 ? 0 : (n.similarity - near.mean) / near.sd
    const scaled = Math.min(1, Math.max(0, (z - from) / (full - from)))
    const prev = fused.get(n.id)
    fused.set(n.id, { ...(prev ?? n), f: (prev?.f ?? 0) + (1 - weight) * scaled, similarity: n.similarity })
  }
  const similarity = x => x.similarity ?? -2
  return [...fused.values()].sort((a, b) => b.f - a.f || similarity(b) - similarity(a) || a.id - b.id)
}

/**
 * Pseudo-relevance feedback (RM3's relevance model): the words of the first `k` word hits, each weighted by its hit's
 * score and its share of the hit's words, times its rarity in the tree (log N / df); the best `m` not already asked
 * make a second query, mixed in by `lambda`.
 */
export function feedbackExpansion (q, tree, { k, m }) {
  const weights = new Map()
  const best = q.first[0]?.score ?? -1
  for (const row of q.first.slice(0, k)) {
    const tokens = tree.tokensOf(row.id)
    const tf = new Map()
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1)
    for (const [t, n] of tf) weights.set(t, (weights.get(t) ?? 0) + (row.score / best) * n / tokens.length)
  }
  return [...weights]
    .filter(([t]) => !q.ownForms.has(tree.formOf(t)))
    .map(([t, w]) => [t, w * Math.log(tree.total / (1 + tree.df(t)))])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, m).map(([t]) => t)
}

/**
 * A term-association table over the tree's chunks: for each word of the question, the `a` words standing out most in
 * the chunks holding it (P(u|t)·log(P(u|t)/P(u)), seen in two chunks at least); a word in over a fifth of the chunks
 * says nothing and is not expanded.
 */
export function associationExpansion (q, tree, { a }) {
  const out = new Set()
  for (const term of q.terms) {
    const holding = tree.chunksHolding(term)
    if (holding.length === 0 || holding.length > tree.total / 5) continue
    const together = new Map()
    for (const id of holding) for (const u of new Set(tree.tokensOf(id))) together.set(u, (together.get(u) ?? 0) + 1)
    const own = tree.formOf(term)
    const ranked = [...together]
      .filter(([u, n]) => n >= 2 && tree.formOf(u) !== own)
      .map(([u, n]) => { const p = n / holding.length; return [u, p * Math.log(p / (tree.chunkDf(u) / tree.total))] })
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    for (const [u] of ranked.slice(0, a)) if (!q.terms.includes(u)) out.add(u)
  }
  return [...out]
}

/**
 * The server's word ranking (chunk-ranking.ts) with two changes to try: coordination by the rarity of the words held
 * (`idfCoordination`: a chunk holding the question's rare words outranks one holding as many common ones) and a file's
 * evidence scaled by the share of the question's words its chunks hold together (`coverage`, a power: a file repeating
 * the same common words in many chunks gains less). `coordination` and `weight` as COORDINATION and
 * FILE_EVIDENCE_WEIGHT; the server's ranking is { idfCoordination: false, coordination: 0.5, coverage: 0, weight: 0.2 }.
 */
export function wordVariant (q, { idfCoordination, coordination, coverage, weight }) {
  const { candidates, heldGroups, idf } = q
  const totalIdf = idf.reduce((a, b) => a + b, 0)
  const groups = idf.length
  const coordinated = candidates.map(row => {
    const held = heldGroups.get(row.id) ?? []
    const share = idfCoordination ? held.reduce((a, g) => a + idf[g], 0) / totalIdf : held.length / groups
    return { ...row, held, score: row.score * (groups === 0 ? 1 : share ** coordination) }
  })
  const files = new Map()
  for (const row of [...coordinated].sort((a, b) => a.score - b.score)) {
    const file = files.get(row.path) ?? { scores: [], words: new Set() }
    if (file.scores.length < 5) file.scores.push(row.score)
    for (const g of row.held) file.words.add(g)
    files.set(row.path, file)
  }
  const evidence = new Map([...files].map(([path, file]) => {
    const sum = file.scores.reduce((a, b) => a + b, 0)
    return [path, coverage === 0 ? sum : sum * ([...file.words].reduce((a, g) => a + idf[g], 0) / totalIdf) ** coverage]
  }))
  return coordinated.map(row => ({ ...row, score: row.score + weight * evidence.get(row.path) })).sort((a, b) => a.score - b.score || a.id - b.id)
}

/**
 * Candidates whose scores are divided by their file's length in chunks against the tree's mean, to the power `alpha`
 * (BM25 normalises a chunk's length, not its file's: a long prose-heavy file offers many chunks matching common words).
 */
export function lengthNormalised (candidates, alpha, chunksIn, meanChunks) {
  return candidates.map(row => ({ ...row, score: row.score / (chunksIn(row.path) / meanChunks) ** alpha }))
}

/** Every combination of the values given per key, e.g. grid({ a: [1, 2], b: [3] }) → [{ a: 1, b: 3 }, { a: 2, b: 3 }]. */
export function grid (values) {
  return Object.entries(values).reduce((settings, [key, options]) => settings.flatMap(s => options.map(o => ({ ...s, [key]: o }))), [{}])
}
