import { createHash } from 'node:crypto'
import { isCommentLine } from './chunker.js'
import { identifierWords } from './code-tokens.js'

/**
 * Most characters of a chunk sent to an embedding model: about 2,000–3,000 tokens of code, inside the window
 * of every common embedding model (8,191 tokens for OpenAI's, 2,048–8,192 for Ollama's).
 */
export const MAX_EMBED_CHARS = 8000

/**
 * A chunk's text as it is hashed and embedded: lines start..end (1-based, inclusive), with a byte-order mark
 * and line-ending CRs dropped, so the index thread (which splits the whole text) and a later read through the
 * line reader (which strips them) agree on it.
 */
export function chunkText (lines: readonly string[], start: number, end: number): string {
  const text = lines.slice(start - 1, end).map(line => line.endsWith('\r') ? line.slice(0, -1) : line).join('\n')
  return text.startsWith('\uFEFF') ? text.slice(1) : text
}

/**
 * The version of what a model is given for a chunk (embeddedChunk): part of the hash vectors are keyed by, so a
 * vector made from another version's text is never taken for this one's.
 */
const EMBEDDED_FORM = 'prose-first'

/**
 * The content hash vectors are keyed by: the same code anywhere (moved, renamed, copied) has one vector, and a new
 * form of the embedded text (EMBEDDED_FORM) new ones.
 */
export function chunkHash (text: string): string {
  return createHash('sha256').update(`${EMBEDDED_FORM}\n${text}`).digest('hex').slice(0, 32)
}

/** Where a chunk is, for the line that heads its embedded text. */
export interface ChunkPlace {
  /** The file as the workspace shows it, e.g. `mm/page_alloc.c`. */
  path: string
  /** The definition it is or lies in, e.g. `Uploader.retry`; '' for code between definitions. */
  symbol: string
  kind: string
  /** The names of the definitions that start in it, space-separated ('' for none). */
  names: string
}

/** Comment markers, dropped from the prose a model reads. */
const MARKS = /[/*#]+/g

/**
 * What is sent to the model for a chunk, prose first: its file (extension dropped), its definition and the names
 * it defines, as words; then its comments; then its code without them, every identifier as words. A sentence model
 * reads English, and only the head of a long text (128 tokens): `req-id-gen-factory: build default gen req id` and a
 * doc comment say more to it than `fastify/lib/req-id-gen-factory.js: function buildDefaultGenReqId` and a line of
 * code. Measured with the shared model on the retrieval bench's tuning questions of three trees (bench/README.md):
 * vectors alone MRR@10 0.32 with the file, the definition and the text as written, 0.40 so.
 */
export function embeddedChunk (text: string, place: ChunkPlace): string {
  const lines = text.split('\n')
  const prose = lines.filter(isCommentLine).map(line => line.replace(MARKS, ' ')).join(' ').replace(/\s+/g, ' ').trim()
  const code = lines.filter(line => !isCommentLine(line)).join('\n')
  const names = place.names.split(' ').filter(name => name !== '' && name !== place.symbol).map(identifierWords)
  const head = [`${identifierWords(place.path.replace(/\.[^./]*$/, ''))}:`, identifierWords(place.symbol), ...(names.length > 0 ? [`(${names.join(', ')})`] : []), prose]
  return embeddedText(`${head.filter(part => part !== '').join(' ')}\n${identifierWords(code)}`.replace(/[ \t]+/g, ' '))
}

/** What is sent to the model for a text: cut (never inside a surrogate pair) to MAX_EMBED_CHARS. */
export function embeddedText (text: string): string {
  if (text.length <= MAX_EMBED_CHARS) return text
  const cut = text.charCodeAt(MAX_EMBED_CHARS - 1)
  return text.slice(0, cut >= 0xd800 && cut <= 0xdbff ? MAX_EMBED_CHARS - 1 : MAX_EMBED_CHARS)
}
