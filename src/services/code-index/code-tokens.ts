import { formsOf, isStopWord, MAX_REMEMBERED, wordForm } from './word-forms.js'

/** Identifiers (and numbers) as code spells them; `$` is part of a JavaScript name. */
const WORDS = /[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+/g
/** Boundaries inside an identifier: `retryFailedUpload`, `HTTPServer`, `upload2` (a digit run is its own part). */
const PARTS = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g
/** Longest token kept; longer words (hashes, base64) are noise to a ranked search. */
const MAX_TOKEN = 40

/**
 * Calls `each(token, compound)` for the tokens of one word as code spells it, lower-cased: the identifier whole
 * and, when it has several, its camelCase / snake_case parts (`compound` true for the whole of such a word).
 * One-letter words and parts are dropped: `i` and `x` would match everything.
 */
function eachTokenOf (word: string, each: (token: string, compound: boolean) => void): void {
  if (word.length > MAX_TOKEN) return
  const whole = word.replace(/\$/g, '').toLowerCase()
  const parts = word.match(PARTS)
  const compound = parts !== null && parts.length > 1
  if (whole.length > 1) each(whole, compound)
  if (!compound) return
  for (const part of parts) if (part.length > 1) each(part.toLowerCase(), false)
}

/** Calls `each` for the tokens of every word of a text (see eachTokenOf). */
function eachToken (text: string, each: (token: string, compound: boolean) => void): void {
  for (const [word] of text.matchAll(WORDS)) eachTokenOf(word, each)
}

/**
 * Code-aware tokens of a text as written, lower-cased: identifiers whole and their parts, so "retry upload"
 * meets `retryFailedUpload` and `retry_failed_upload`.
 */
export function codeTokens (text: string): string[] {
  const tokens: string[] = []
  eachToken(text, token => tokens.push(token))
  return tokens
}

/** A token as it is indexed: a single word in its searchable form, a compound or a number as written. */
const indexedForm = (token: string, compound: boolean): string => compound || /[0-9]/.test(token) ? token : wordForm(token)

/**
 * The tokens a text is indexed by: as codeTokens, but each single word in its searchable form (stemmed and
 * joined with its abbreviations: allocation and allocate are one, init and initialize too). An identifier of
 * several parts is kept whole as written — `alloc_pages` is a name, not a word — and its parts take their forms.
 */
export function searchTokens (text: string): string[] {
  const tokens: string[] = []
  eachToken(text, (token, compound) => tokens.push(indexedForm(token, compound)))
  return tokens
}

// Code repeats its words: the index thread's parsers tokenize 850 MB of Linux, and most words were seen before.
const spelled = new Map<string, string>()

/** A word's search tokens, space-separated ('' for none), remembered. */
function wordTokens (word: string): string {
  let tokens = spelled.get(word)
  if (tokens === undefined) {
    const found: string[] = []
    eachTokenOf(word, (token, compound) => found.push(indexedForm(token, compound)))
    tokens = found.join(' ')
    if (spelled.size >= MAX_REMEMBERED) spelled.clear()
    spelled.set(word, tokens)
  }
  return tokens
}

/** searchTokens(text) joined by spaces: a text as the index's full-text table stores it. */
export function searchText (text: string): string {
  const out: string[] = []
  WORDS.lastIndex = 0
  for (let match = WORDS.exec(text); match !== null; match = WORDS.exec(text)) {
    const tokens = wordTokens(match[0])
    if (tokens !== '') out.push(tokens)
  }
  return out.join(' ')
}

/**
 * A text with every identifier written as the words it is made of, lower-cased: `retryFailedUpload` and
 * `retry_failed_upload` become "retry failed upload" — what a sentence model reads as English.
 */
export function identifierWords (text: string): string {
  return text.replace(WORDS, word => word.match(PARTS)?.join(' ').toLowerCase() ?? '')
}

/** The form of one query term, as searchTokens writes it. */
const formOf = (term: string): string => searchTokens(term)[0] ?? term

/**
 * The distinct words of a query as written, in first-seen order, without the words that name no subject
 * ("where", "how", "the") unless nothing else is left.
 */
export function queryTerms (query: string): string[] {
  const all = [...new Set(codeTokens(query))]
  const telling = all.filter(term => !isStopWord(term))
  return telling.length > 0 ? telling : all
}

/** Every form the terms of a query are searched by (theirs and their other words): what a matching line holds. */
export function termForms (terms: readonly string[]): Set<string> {
  return new Set(terms.flatMap(term => formsOf(formOf(term))))
}

/**
 * An FTS5 MATCH expression for query terms: all of them, or any. Each term matches its form or one of its other
 * words; every form is quoted, so a term is never syntax.
 */
export function matchExpression (terms: readonly string[], op: 'AND' | 'OR' = 'OR'): string {
  const groups = [...new Set(terms.map(formOf))].map(form => formsOf(form).map(f => `"${f}"`))
  return groups.map(group => group.length === 1 ? group[0] : `(${group.join(' OR ')})`).join(` ${op} `)
}
