import { MAX_SOURCE_BYTES, symbolLanguageOf, type SymbolLanguage } from '../symbols/index.js'
import type { WorkspaceService } from '../workspace/index.js'
import { entryOf } from './index-entry.js'
import { PARSER_DEPTH, type IndexParser } from './index-parser.js'
import { NOT_INDEXED, type FileEntry } from './index-schema.js'
import type { ChangedFile } from './index-scan.js'
import { readSourceText } from './indexed-lines.js'

/** A write batch holds about this much: each file counts its words plus FILE_WEIGHT (so ~100 small files, or fewer big ones). */
const BATCH_WEIGHT = 8 * 1024 * 1024
const FILE_WEIGHT = 80 * 1024
// A definition costs its objects (its outline entry, its chunk's tokens): a header of 50,000 #defines weighs
// 30 MB, not its 2 MB of text.
const DEFINITION_WEIGHT = 600

/** What parseAndWrite needs. */
export interface BuildOptions {
  workspace: WorkspaceService
  parsers: IndexParser[]
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

async function readEntry (workspace: WorkspaceService, file: Changed, parser: IndexParser, signal: AbortSignal): Promise<FileEntry> {
  // The walk listed it through verified folders; openFile opens it without following a link and checks the
  // open descriptor is inside the root, so no second resolve is needed.
  const handle = await workspace.openFile({ relative: file.relative, fsPath: file.fsPath, requested: file.relative, base: '' })
  try {
    const stats = await handle.stat()
    const read = { path: file.fsPath, shown: file.relative, size: stats.size, mtimeMs: stats.mtimeMs }
    // Binary, or grown past the size limit since the walk: kept as a file with nothing in it, so the next
    // scan passes it by as unchanged.
    const none = (): FileEntry => entryOf({ ...read, language: NOT_INDEXED, text: '', definitions: [] })
    if (stats.size > MAX_SOURCE_BYTES) return none()
    const text = await readSourceText(workspace, handle, stats.size, signal)
    return text === undefined ? none() : await parser.entry({ ...read, text }, file.language, signal)
  } finally {
    await handle.close()
  }
}

/** What an entry weighs in a write batch: its text (about its words' size), its definitions' objects, its sites. */
function weightOf (entry: FileEntry): number {
  let weight = FILE_WEIGHT + entry.symbols.length * DEFINITION_WEIGHT + (entry.references?.sites.byteLength ?? 0)
  for (const chunk of entry.chunks) weight += chunk.fields.body.length + chunk.fields.head.length
  return weight
}

/**
 * Reads, parses and writes the changed files: PARSER_DEPTH lanes per parser thread, each taking the next file (read here,
 * parsed and turned into its entry in the parser's thread), batches written as they fill (about 8 MB of source and definitions). The first write
 * that fails stops the lanes, and is what this rejects with; a file that cannot be read or parsed is passed by.
 */
export async function parseAndWrite (changedFiles: readonly ChangedFile[], options: BuildOptions, signal: AbortSignal): Promise<void> {
  const { workspace, parsers } = options
  // The walk kept only names of a language the parser reads.
  const changed: Changed[] = changedFiles.map(f => ({ ...f, language: symbolLanguageOf(f.fsPath) as SymbolLanguage }))
  let failure: unknown
  let batch: FileEntry[] = []
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
        await options.write(files)
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
  const lane = async (parser: IndexParser): Promise<void> => {
    while (more()) {
      await options.pause?.()
      if (!more()) break
      const file = changed[next++]
      try {
        const entry = await readEntry(workspace, file, parser, signal)
        batch.push(entry)
        weight += weightOf(entry)
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
  // PARSER_DEPTH lanes per parser: its next file is read and sent while it parses one.
  await Promise.all(parsers.flatMap(parser => Array.from({ length: PARSER_DEPTH }, async () => await lane(parser))))
  await flush()
  await writing
  if (failure !== undefined) throw failure
  signal.throwIfAborted()
}
