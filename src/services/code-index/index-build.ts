import type { Logger } from '../../logger.js'
import { MAX_SOURCE_BYTES, symbolLanguageOf, type SymbolLanguage } from '../symbol-languages.js'
import type { SymbolParser } from '../symbol-parser.js'
import type { WorkspaceService } from '../workspace.js'
import { NOT_INDEXED } from './index-schema.js'
import type { IndexRequest, ParsedFile } from './index-worker.js'
import type { ChangedFile } from './index-scan.js'
import { readSourceText } from './indexed-lines.js'

/** A write batch holds about this much: each file counts its text plus FILE_WEIGHT (so ~100 small files, or fewer big ones). */
const BATCH_WEIGHT = 8 * 1024 * 1024
const FILE_WEIGHT = 80 * 1024
// A definition costs its objects here and in the index thread (its outline, its chunk): a header of 50,000 #defines weighs 30 MB, not its 2 MB of text.
const DEFINITION_WEIGHT = 600

/** What parseAndWrite needs. */
export interface BuildOptions {
  workspace: WorkspaceService
  parsers: SymbolParser[]
  /** Sends a request to the index thread (write batches here). */
  ask: (request: IndexRequest) => Promise<unknown>
  log: Logger
  /** Called after each batch is written, with how many files it held. */
  written: (files: number) => void
  /** Called for a file that could not be read or parsed (counted as done; the next scan retries it). */
  skipped: () => void
}

/** A file the scan found new or changed, with the language the parser reads it as. */
interface Changed extends ChangedFile { language: SymbolLanguage }

async function readParsed (workspace: WorkspaceService, entry: Changed, parser: SymbolParser, signal: AbortSignal): Promise<ParsedFile> {
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
    const parsed = await parser.definitions(text, entry.language, signal)
    return { path: entry.fsPath, shown: entry.relative, size: stats.size, mtimeMs: stats.mtimeMs, language: entry.language.name, text, definitions: parsed.definitions }
  } finally {
    await handle.close()
  }
}

/**
 * Reads, parses and writes the changed files: one lane per parser thread, each taking the next file, and the
 * batches written one after another while the next ones are parsed (at most two wait in memory). The first
 * write that fails stops the lanes, and is what this rejects with.
 */
export async function parseAndWrite (changedFiles: readonly ChangedFile[], options: BuildOptions, signal: AbortSignal): Promise<void> {
  const { workspace, parsers, ask, log } = options
  // The walk kept only names of a language the parser reads.
  const changed: Changed[] = changedFiles.map(f => ({ ...f, language: symbolLanguageOf(f.fsPath) as SymbolLanguage }))
  const halt = new AbortController()
  const stopped = AbortSignal.any([signal, halt.signal])
  let failure: unknown
  let batch: ParsedFile[] = []
  let weight = 0
  let written: Promise<void> = Promise.resolve()
  const flush = async (): Promise<void> => {
    const files = batch
    if (files.length === 0) return
    batch = []
    weight = 0
    const previous = written
    written = previous.then(async () => {
      if (failure !== undefined) return
      await ask({ write: files })
      options.written(files.length)
    }).catch((err: unknown) => {
      // Kept, never left unhandled: the lanes stop at their next file and the build rejects with it.
      failure ??= err
      halt.abort()
    })
    await previous
  }
  let next = 0
  const lane = async (parser: SymbolParser): Promise<void> => {
    while (next < changed.length && !stopped.aborted) {
      const file = changed[next++]
      try {
        const parsed = await readParsed(workspace, file, parser, stopped)
        batch.push(parsed)
        weight += parsed.text.length + FILE_WEIGHT + parsed.definitions.length * DEFINITION_WEIGHT
      } catch (err) {
        if (stopped.aborted) break
        // A file that vanished or changed kind since the walk, or one the parser gave up on: the next scan retries it.
        log.debug({ err, file: file.relative }, 'file not indexed')
        options.skipped()
        continue
      }
      if (weight >= BATCH_WEIGHT) await flush()
    }
  }
  await Promise.all(parsers.map(lane))
  if (failure === undefined) await flush()
  await written
  if (failure !== undefined) throw failure
  signal.throwIfAborted()
}
