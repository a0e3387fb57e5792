import { createHash } from 'node:crypto'

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

/** The content hash vectors are keyed by: the same code anywhere (moved, renamed, copied) has one vector. */
export function chunkHash (text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32)
}

/** Where a chunk is, for the line that heads its embedded text. */
export interface ChunkPlace {
  /** The file as the workspace shows it, e.g. `mm/page_alloc.c`. */
  path: string
  /** The definition it is or lies in, e.g. `Uploader.retry`; '' for code between definitions. */
  symbol: string
  kind: string
}

/**
 * What is sent to the model for a chunk: a line naming its file and definition, then its text (which starts with
 * the definition's doc comment and signature). Models read only the head of a long text — a sentence model 128
 * tokens — so what says most comes first.
 */
export function embeddedChunk (text: string, place: ChunkPlace): string {
  const what = place.symbol === '' ? place.path : `${place.path}: ${place.kind} ${place.symbol}`
  return embeddedText(`${what}\n${text}`)
}

/** What is sent to the model for a text: cut (never inside a surrogate pair) to MAX_EMBED_CHARS. */
export function embeddedText (text: string): string {
  if (text.length <= MAX_EMBED_CHARS) return text
  const cut = text.charCodeAt(MAX_EMBED_CHARS - 1)
  return text.slice(0, cut >= 0xd800 && cut <= 0xdbff ? MAX_EMBED_CHARS - 1 : MAX_EMBED_CHARS)
}
