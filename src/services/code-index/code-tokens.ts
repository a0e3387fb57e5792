/** Identifiers (and numbers) as code spells them; `$` is part of a JavaScript name. */
const WORDS = /[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+/g
/** Boundaries inside an identifier: `retryFailedUpload`, `HTTPServer`, `upload2` (a digit run is its own part). */
const PARTS = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g
/** Longest token kept; longer words (hashes, base64) are noise to a ranked search. */
const MAX_TOKEN = 40

/**
 * Code-aware search tokens of a text, lower-cased: every identifier whole and, when it has several, its
 * camelCase / snake_case parts — so "retry upload" meets `retryFailedUpload` and `retry_failed_upload`.
 * One-letter words and parts are dropped: `i` and `x` would match everything.
 */
export function codeTokens (text: string): string[] {
  const tokens: string[] = []
  for (const [word] of text.matchAll(WORDS)) {
    if (word.length > MAX_TOKEN) continue
    const whole = word.replace(/\$/g, '').toLowerCase()
    if (whole.length > 1) tokens.push(whole)
    const parts = word.match(PARTS)
    if (parts === null || parts.length < 2) continue
    for (const part of parts) if (part.length > 1) tokens.push(part.toLowerCase())
  }
  return tokens
}

/** The distinct tokens of a query, in first-seen order, for an FTS5 OR query (each quoted: never syntax). */
export function queryTerms (query: string): string[] {
  return [...new Set(codeTokens(query))]
}

/** An FTS5 MATCH expression for terms: all of them, or any (each quoted: a term is never syntax). */
export function matchExpression (terms: readonly string[], op: 'AND' | 'OR' = 'OR'): string {
  return terms.map(term => `"${term}"`).join(` ${op} `)
}
