import { buildOutline, type FileReferences, type OutlineSymbol, type RawDefinition } from '../symbols/index.js'
import { chunkFile, docStart } from './chunker.js'
import { chunkHash, chunkText } from './chunk-text.js'
import { searchText } from './code-tokens.js'
import type { ChunkFields, FileEntry } from './index-schema.js'

/** A file as the build read it, before its parse. */
export interface ReadFile {
  path: string
  /** Display path: its words are searchable too ("upload" finds src/upload/…). */
  shown: string
  size: number
  mtimeMs: number
  text: string
}

/** One file as the build read and parsed it. */
export interface ParsedFile extends ReadFile {
  language: string
  definitions: RawDefinition[]
  references?: FileReferences
}

/**
 * A chunk's searchable fields: the names it defines (its own, and those of every definition starting in it),
 * their heads (signature and the doc comment above), the file's path, and its text.
 */
function fieldsOf (lines: readonly string[], text: string, defined: readonly OutlineSymbol[], symbol: string, where: string): ChunkFields {
  const names = defined.length > 0 ? defined.map(s => s.name).join(' ') : symbol
  return {
    name: searchText(names),
    head: searchText(defined.map(s => `${lines.slice(docStart(lines, s.line) - 1, s.line - 1).join('\n')}\n${s.signature}`).join('\n')),
    path: where,
    body: searchText(text)
  }
}

/** Turns a parsed file into what the index stores: its outline, its chunks and each chunk's search fields. */
export function entryOf (file: ParsedFile): FileEntry {
  const lines = file.text.split('\n')
  const symbols = buildOutline(file.definitions, lines)
  const where = searchText(file.shown)
  // Chunks come in line order, never overlap, and leave out only blank lines (where no definition starts): one
  // pass over the definitions by line hands each chunk those starting in it (a header of 50,000 #defines would
  // otherwise filter them all once per chunk).
  const byLine = [...symbols].sort((a, b) => a.line - b.line)
  let next = 0
  const chunks = chunkFile(lines, symbols).map(chunk => {
    const from = next
    while (next < byLine.length && byLine[next].line <= chunk.end) next++
    // The text hashed is the one tokenized: a byte-order mark and line-ending CRs are no part of a word.
    const text = chunkText(lines, chunk.start, chunk.end)
    return { ...chunk, hash: chunkHash(text), fields: fieldsOf(lines, text, byLine.slice(from, next), chunk.symbol, where) }
  })
  return { path: file.path, size: file.size, mtimeMs: file.mtimeMs, language: file.language, chunks, symbols, ...(file.references === undefined ? {} : { references: file.references }) }
}
