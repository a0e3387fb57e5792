/**
 * Edit distance (Levenshtein) when it is at most `limit`, else `limit + 1`: only the band of width
 * 2·limit+1 is computed and the scan stops as soon as a row's minimum passes the limit.
 */
export function editDistance (a: string, b: string, limit = Math.max(a.length, b.length)): number {
  if (a === b) return 0
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  const over = limit + 1
  let prev = Array.from({ length: b.length + 1 }, (_, j) => (j <= limit ? j : over))
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(over)
    row[0] = i <= limit ? i : over
    const from = Math.max(1, i - limit)
    const to = Math.min(b.length, i + limit)
    let best = row[0]
    for (let j = from; j <= to; j++) {
      row[j] = Math.min(over, prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (row[j] < best) best = row[j]
    }
    if (best > limit) return over
    prev = row
  }
  return Math.min(prev[b.length], over)
}

/** Longest word worth comparing for a typo, and how many edits a typo may be. */
const TYPO_MAX_CHARS = 64
const TYPO_EDITS = 3

/** How many leading characters two words share. */
function sharedStart (a: string, b: string): number {
  let n = 0
  while (n < a.length && a[n] === b[n]) n++
  return n
}

/**
 * The candidate closest to `word` (a typo's fix: case ignored, at most 3 edits), or undefined; of two as close,
 * the one that starts like it (`prot`: port, not root — a swap of two letters is two edits to either).
 */
export function closestName (word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > TYPO_MAX_CHARS) return undefined
  const lower = word.toLowerCase()
  let best: { name: string, edits: number, start: number } | undefined
  for (const name of candidates) {
    const edits = editDistance(lower, name.toLowerCase(), TYPO_EDITS)
    const start = sharedStart(lower, name.toLowerCase())
    if (edits <= TYPO_EDITS && (best === undefined || edits < best.edits || (edits === best.edits && start > best.start))) best = { name, edits, start }
  }
  return best?.name
}
