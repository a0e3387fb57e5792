import { buildOutline, MAX_SOURCE_BYTES, symbolLanguageOf, type FileReferences, type SymbolLanguage, type OutlineSymbol, type RawDefinition, type SymbolParser } from '../symbols/index.js'

/** What the build asks of a parser. */
type Parse = Pick<SymbolParser, 'definitions'>
import type { WorkspaceService } from '../workspace/index.js'
import { chunkFile, docStart, type Chunk } from './chunker.js'
import { chunkHash, chunkText } from './chunk-text.js'
import { searchTokens } from './code-tokens.js'
import { NOT_INDEXED, type ChunkFields, type FileEntry } from './index-schema.js'
import type { ChangedFile } from './index-scan.js'
import { readSourceText } from './indexed-lines.js'

/** One file as the build read and parsed it. */
export interface ParsedFile {
  path: string
  /** Display path: its words are searchable too ("upload" finds src/upload/…). */
  shown: string
  size: number
  mtimeMs: number
  language: string
  text: string
  definitions: RawDefinition[]
  references?: FileReferences
}

/**
 * A chunk's searchable fields: the names it defines (its own, and those of every definition starting in it),
 * their heads (signature and the doc comment above), the file's path, and its text.
 */
function fieldsOf (lines: readonly string[], chunk: Chunk, defined: readonly OutlineSymbol[], where: string): ChunkFields {
  const names = defined.length > 0 ? defined.map(s => s.name).join(' ') : chunk.symbol
  return {
    name: searchTokens(names).join(' '),
    head: searchTokens(defined.map(s => `${lines.slice(docStart(lines, s.line) - 1, s.line - 1).join('\n')}\n${s.signature}`).join('\n')).join(' '),
    path: where,
    body: searchTokens(lines.slice(chunk.start - 1, chunk.end).join('\n')).join(' ')
  }
}

/** Turns a parsed file into what the index stores: its outline, its chunks and each chunk's search fields. */
export function entryOf (file: ParsedFile): FileEntry {
  const lines = file.text.split('\n')
  const symbols = buildOutline(file.definitions, lines)
  const where = searchTokens(file.shown).join(' ')
  // Chunks come in line order, never overlap, and leave out only blank lines (where no definition starts): one
  // pass over the definitions by line hands each chunk those starting in it (a header of 50,000 #defines would
  // otherwise filter them all once per chunk).
  const byLine = [...symbols].sort((a, b) => a.line - b.line)
  let next = 0
  const chunks = chunkFile(lines, symbols).map(chunk => {
    const from = next
    while (next < byLine.length && byLine[next].line <= chunk.end) next++
    return { ...chunk, hash: chunkHash(chunkText(lines, chunk.start, chunk.end)), fields: fieldsOf(lines, chunk, byLine.slice(from, next), where) }
  })
  return { path: file.path, size: file.size, mtimeMs: file.mtimeMs, language: file.language, chunks, symbols, ...(file.references === undefined ? {} : { references: file.references }) }
}

/** A write batch holds about this much: each file counts its text plus FILE_WEIGHT (so ~100 small files, or fewer big ones). */
const BATCH_WEIGHT = 8 * 1024 * 1024
const FILE_WEIGHT = 80 * 1024
// A definition costs its objects (its outline entry, its chunk's tokens): a header of 50,000 #defines weighs
// 30 MB, not its 2 MB of text.
const DEFINITION_WEIGHT = 600

/** What parseAndWrite needs. */
export interface BuildOptions {
  workspace: WorkspaceService
  parsers: Parse[]
  /** Stores a batch (one transaction); a throw stops the build with that error. */
  write: (entries: FileEntry[]) => void | Promise<void>
  /** Called after each file is done (written, or passed by), with how many are done so far. */
  progress?: (done: number) => void
  /** Called for a file that could not be read or parsed (the next scan retries it). */
  skipped?: (file: ChangedFile, err: unknown) => void
  /** Waited for before each file: the build yields while calls a client waits on run. */
  pause?: () => Promise<void>
}

/** A file the scan found new or changed, with the language the parser reads it as. */
interface Changed extends ChangedFile { language: SymbolLanguage }

async function readParsed (workspace: WorkspaceService, entry: Changed, parser: Parse, signal: AbortSignal): Promise<ParsedFile> {
  // The walk listed it through verified folders; openFile opens it without following a link and checks the
  // open descriptor is inside the root, so no second resolve is needed.
  const handle = await workspace.openFile({ relative: entry.relative, fsPath: entry.fsPath, requested: entry.relative, base: '' })
  try {
    const stats = await handle.stat()
    // Binary, or grown past the size limit since the walk: kept as a file with nothing in it, so the next
    // scan passes it by as unchanged.
    const none = { path: entry.fsPath, shown: entry.relative, size: stats.size, mtimeMs: stats.mtimeMs, language: NOT_INDEXED, text: '', definitions: [] }
    if (stats.size > MAX_SOURCE_BYTES) return none
    const text = await readSourceText(workspace, handle, stats.size, signal)
    if (text === undefined) return none
    const parsed = await parser.definitions(text, entry.language, signal, { references: true })
    return { path: entry.fsPath, shown: entry.relative, size: stats.size, mtimeMs: stats.mtimeMs, language: entry.language.name, text, definitions: parsed.definitions, ...(parsed.references === undefined ? {} : { references: parsed.references }) }
  } finally {
    await handle.close()
  }
}

/**
 * Reads, parses and writes the changed files, in the index's own thread: one lane per parser thread, each
 * taking the next file, batches written as they fill (about 8 MB of source and definitions). The first write
 * that fails stops the lanes, and is what this rejects with; a file that cannot be read or parsed is passed by.
 */
export async function parseAndWrite (changedFiles: readonly ChangedFile[], options: BuildOptions, signal: AbortSignal): Promise<void> {
  const { workspace, parsers } = options
  // The walk kept only names of a language the parser reads.
  const changed: Changed[] = changedFiles.map(f => ({ ...f, language: symbolLanguageOf(f.fsPath) as SymbolLanguage }))
  let failure: unknown
  let batch: ParsedFile[] = []
  let weight = 0
  let done = 0
  let writing: Promise<void> = Promise.resolve()
  const flush = async (): Promise<void> => {
    const files = batch
    batch = []
    weight = 0
    if (files.length === 0 || failure !== undefined) return
    // One write at a time, in order; a lane whose batch is full waits for the one before.
    writing = writing.then(async () => {
      if (failure !== undefined) return
      try {
        // A batch's transaction cannot be paused once begun: it waits for the calls running now instead.
        await options.pause?.()
        await options.write(files.map(entryOf))
        done += files.length
        options.progress?.(done)
      } catch (err) {
        failure ??= err
      }
    })
    await writing
  }
  let next = 0
  const more = (): boolean => next < changed.length && failure === undefined && !signal.aborted
  const lane = async (parser: Parse): Promise<void> => {
    while (more()) {
      await options.pause?.()
      if (!more()) break
      const file = changed[next++]
      try {
        const parsed = await readParsed(workspace, file, parser, signal)
        batch.push(parsed)
        weight += parsed.text.length + FILE_WEIGHT + parsed.definitions.length * DEFINITION_WEIGHT + (parsed.references?.sites.byteLength ?? 0)
      } catch (err) {
        if (signal.aborted) break
        // A file that vanished or changed kind since the walk, or one the parser gave up on: the next scan retries it.
        options.skipped?.(file, err)
        options.progress?.(++done)
        continue
      }
      if (weight >= BATCH_WEIGHT) await flush()
    }
  }
  await Promise.all(parsers.map(lane))
  await flush()
  await writing
  if (failure !== undefined) throw failure
  signal.throwIfAborted()
}
