/**
 * Where a text may be cut so that the token counts of the parts add up to the count of the whole.
 *
 * cl100k's pre-tokenizer never lets a piece run from a non-space character into a following space or tab,
 * nor from a line feed into a line that starts (after optional spaces) with a non-space character. Cut at
 * such a point, each part pre-tokenizes exactly as it did inside the whole text, and BPE merges never cross
 * pieces — so the sum is exact (test/services/tokenizer.test.ts checks it against js-tiktoken on arbitrary text).
 */
const BOUNDARY = /(?<=\S)(?=[^\S\r\n])|(?<=\n)(?=[^\S\r\n]*\S)/gu

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/** Cuts `text` into parts of about `target` characters at token boundaries (a part is longer only when no boundary is near). */
export function splitAtTokenBoundaries (text: string, target: number): string[] {
  const parts: string[] = []
  let from = 0
  while (text.length - from > target) {
    let start = from + target
    // With the u flag a search starting inside a surrogate pair starts at the pair's first half, which
    // may be `from` itself: the cut would be empty and the loop would never advance.
    if (isLowSurrogate(text.charCodeAt(start))) start++
    BOUNDARY.lastIndex = start
    const m = BOUNDARY.exec(text)
    if (m === null) break
    // A boundary right at `start` may be found by a search that started there; it is a valid cut.
    parts.push(text.slice(from, m.index))
    from = m.index
  }
  parts.push(text.slice(from))
  return parts
}
