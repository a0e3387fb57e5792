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
