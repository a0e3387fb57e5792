import type { OutlineSymbol } from '../symbols/index.js'

/** A span of a file indexed (and found) as one unit: a definition, part of a big one, or code between them. */
export interface Chunk {
  /** 1-based, inclusive. */
  start: number
  end: number
  /** The definition the chunk is (or lies in), e.g. `Uploader.retry`; '' for top-level code between definitions. */
  symbol: string
  kind: string
}

/** Longest chunk, in lines: about a screen, the size an agent reads in one go. */
export const MAX_CHUNK_LINES = 60
/** Chunks shorter than this merge with a neighbour while the two fit MAX_CHUNK_LINES. */
export const MIN_CHUNK_LINES = 12

/** A line that is a comment in the C, JavaScript, Go, Rust, Python or shell manner (not a preprocessor line). */
const COMMENT = /^\s*(\/\/|\/\*|\*|#(?!\s*(define|include|if|ifdef|ifndef|else|elif|endif|undef|pragma|error|line)\b)|--|"""|''')/
/** Whether a line is a comment (see COMMENT): what the model reads of a chunk first (embeddedChunk). */
export const isCommentLine = (line: string): boolean => COMMENT.test(line)
/** Longest doc comment taken into a definition, in lines. */
const MAX_DOC_LINES = 40

/**
 * Where a definition at `line` (1-based) begins with the comment right above it: the first of the comment lines
 * directly above, not above `floor`.
 */
export function docStart (lines: readonly string[], line: number, floor = 1): number {
  let from = line
  while (from > floor && line - from < MAX_DOC_LINES && COMMENT.test(lines[from - 2])) from--
  return from
}

// A span's members are found only for a span too long for one chunk (few are): finding them for every span
// of a header of thousands of #defines went over all of them once per span.
interface Span { start: number, end: number, symbol: string, kind: string, children?: () => OutlineSymbol[] }

const qualified = (s: OutlineSymbol): string => s.container === undefined ? s.name : `${s.container}.${s.name}`

/**
 * Spans of `symbols` (all starting at `depth`) and the gaps between them, within lines from..to. A definition's
 * span begins at its doc comment: the words that say what it does are found, shown and embedded with it.
 */
function spansOf (lines: readonly string[], all: OutlineSymbol[], from: number, to: number, depth: number, owner: { symbol: string, kind: string }): Span[] {
  const spans: Span[] = []
  let line = from
  const top = all.filter(s => s.depth === depth && s.line >= from && s.endLine <= to)
  for (const s of top) {
    const start = docStart(lines, s.line, line)
    if (start > line) spans.push({ start: line, end: start - 1, ...owner })
    spans.push({ start, end: s.endLine, symbol: qualified(s), kind: s.kind, children: () => all.filter(c => c.depth > depth && c.line >= s.line && c.endLine <= s.endLine) })
    line = Math.max(line, s.endLine + 1)
  }
  if (line <= to) spans.push({ start: line, end: to, ...owner })
  return spans
}

/** A span too long for one chunk: its members become chunks, else it is cut into windows. */
function split (lines: readonly string[], span: Span, depth: number): Chunk[] {
  if (span.end - span.start + 1 <= MAX_CHUNK_LINES) return [{ start: span.start, end: span.end, symbol: span.symbol, kind: span.kind }]
  const children = span.children?.() ?? []
  if (children.length > 0) {
    return spansOf(lines, children, span.start, span.end, depth + 1, { symbol: span.symbol, kind: span.kind }).flatMap(s => split(lines, s, depth + 1))
  }
  const windows: Chunk[] = []
  for (let start = span.start; start <= span.end; start += MAX_CHUNK_LINES) {
    windows.push({ start, end: Math.min(span.end, start + MAX_CHUNK_LINES - 1), symbol: span.symbol, kind: span.kind })
  }
  return windows
}

/**
 * Chunks of a file in the cAST manner: definitions are chunks, a definition too long is split at its members
 * (else into windows), then small neighbours merge greedily while they fit. Lines that are blank, alone, do
 * not make a chunk. `lines` is the file's text by line; the outline gives the definitions.
 */
export function chunkFile (lines: readonly string[], outline: readonly OutlineSymbol[]): Chunk[] {
  const total = lines.length > 0 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length
  if (total === 0) return []
  const pieces = spansOf(lines, [...outline], 1, total, 1, { symbol: '', kind: 'code' }).flatMap(s => split(lines, s, 1))
  const blank = (c: Chunk): boolean => lines.slice(c.start - 1, c.end).every(l => l.trim() === '')
  const chunks: Chunk[] = []
  for (const piece of pieces.filter(c => !blank(c))) {
    const last = chunks.at(-1)
    const size = (c: Chunk): number => c.end - c.start + 1
    if (last !== undefined && (size(last) < MIN_CHUNK_LINES || size(piece) < MIN_CHUNK_LINES) && piece.end - last.start + 1 <= MAX_CHUNK_LINES) {
      // The merged chunk keeps the name of its first definition, or takes the newcomer's when it had none.
      chunks[chunks.length - 1] = last.symbol === '' ? { ...piece, start: last.start } : { ...last, end: piece.end }
    } else {
      chunks.push(piece)
    }
  }
  return chunks
}
