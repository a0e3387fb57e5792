// The C tokens the scan (c-source.ts) steps over: blanks, comments, literals, directives, parentheses.

/** A blank other than a line break. */
export const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 13 || c === 12 || c === 11
/** A character that starts an identifier. */
export const isWordStart = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36
/** A character of an identifier. */
export const isWord = (c: number): boolean => isWordStart(c) || (c >= 48 && c <= 57)

/** End of the comment starting at `i` (a line comment goes on past an escaped line break). */
export function skipComment (s: string, i: number): number {
  if (s.charCodeAt(i + 1) === 42) {
    const end = s.indexOf('*/', i + 2)
    return end === -1 ? s.length : end + 2
  }
  // A line comment, continued by a backslash at its end.
  let k = i
  for (;;) {
    k = s.indexOf('\n', k)
    if (k === -1) return s.length
    if (!continues(s, k)) return k
    k++
  }
}

/** End of the string or character literal starting at `i` (unterminated: its line's end). */
export function skipQuoted (s: string, i: number, quote: number): number {
  for (let k = i + 1; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c === quote) return k + 1
    if (c === 92) k++
    else if (c === 10) return k
  }
  return s.length
}

/** The line break at `k` is escaped: the logical line goes on. */
export function continues (s: string, k: number): boolean {
  const before = s.charCodeAt(k - 1) === 13 ? k - 2 : k - 1
  return s.charCodeAt(before) === 92
}

/** A comment starts at `k`. */
export const isComment = (s: string, k: number): boolean => s.charCodeAt(k) === 47 && (s.charCodeAt(k + 1) === 42 || s.charCodeAt(k + 1) === 47)

/** First offset from `k` that is neither blank nor comment (a directive's `#`), or -1. */
export function nextToken (s: string, k: number): number {
  while (k < s.length) {
    const c = s.charCodeAt(k)
    if (isSpace(c) || c === 10) k++
    else if (isComment(s, k)) k = skipComment(s, k)
    else return k
  }
  return -1
}

/**
 * First offset from `k` that is code (no blank, comment or directive), or -1; and whether an `#else` or `#elif` was
 * passed on the way (the text before may be one of several heads of one body).
 */
export function nextCode (s: string, k: number): { at: number, alternative: boolean } {
  let alternative = false
  for (let at = nextToken(s, k); at !== -1; at = nextToken(s, at)) {
    if (s.charCodeAt(at) !== 35) return { at, alternative }
    const name = (/^#\s*(\w*)/.exec(s.slice(at, at + 40)) as RegExpExecArray)[1]
    if (name === 'else' || name.startsWith('elif')) alternative = true
    at = s.indexOf('\n', at)
    while (at !== -1 && continues(s, at)) at = s.indexOf('\n', at + 1)
    if (at === -1) break
  }
  return { at: -1, alternative }
}

/** First blank (space or tab, not in a comment) between `from` and `to`: where a `;` can go. */
export function blankBetween (s: string, from: number, to: number): number {
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k)
    if (c === 32 || c === 9) return k
    if (isComment(s, k)) k = skipComment(s, k) - 1
  }
  return -1
}

/** The `)` matching the `(` at `open` on the same line, or -1. */
export function closeOnLine (s: string, open: number): number {
  let depth = 0
  for (let k = open; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c === 40) depth++
    else if (c === 41 && --depth === 0) return k
    else if (c === 10) return -1
  }
  return -1
}
