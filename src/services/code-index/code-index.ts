import type { Logger } from '../../logger.js'
import { MAX_SOURCE_BYTES, symbolLanguageOf, type SymbolLanguage } from '../symbol-languages.js'
import type { SymbolParser } from '../symbol-parser.js'
import type { WorkspaceService } from '../workspace.js'
import type { IndexRequest, IndexThreadData, ParsedFile } from './index-worker.js'
import type { ScanResult } from './index-scan.js'
import { readSourceText } from './indexed-lines.js'
import { startRequestThread, threadModule, type RequestThread } from './request-thread.js'
import { NOT_INDEXED, type ChunkRow, type IndexStore, type NameMatch, type PathScope, type StoreCounts, type SymbolRow } from './index-store.js'

/** Where the index stands. */
export interface CodeIndexStatus extends StoreCounts {
  /** `building` until the first scan has finished, then `ready` (rescans happen behind it), or `failed`. */
  state: 'building' | 'ready' | 'failed'
  /** Files the running scan found new or changed, and how many of them are done. */
  pending: number
  done: number
  /** When the last scan finished (ms since the epoch). */
  lastScan?: number
  /** Duration of the last scan. */
  lastScanMs?: number
  error?: string
}

/** The symbol and chunk index of the served roots, built and kept fresh in the background. */
export interface CodeIndex {
  status(): CodeIndexStatus
  /** Opens the index and starts the first scan (the server calls it once it serves; a printing command never does). */
  start(): void
  /**
   * Waits (at most `waitMs`) for the first scan, reporting progress; true when it finished. A call that
   * gets false answers from what is indexed so far. Also starts a rescan when the last one is stale.
   */
  ready(waitMs: number, signal: AbortSignal, progress?: (done: number, total: number) => void): Promise<boolean>
  findSymbols(nameLower: string, match: NameMatch, kind: string | undefined, scope: PathScope, limit: number): SymbolRow[]
  searchChunks(terms: readonly string[], scope: PathScope, limit: number): ChunkRow[]
  /** The chunks with these ids that are still indexed. */
  chunksById(ids: readonly number[]): ChunkRow[]
  /** Calls `listener` after every scan that finished, with how many files it wrote or removed. */
  onScanned(listener: (changed: number) => void): void
  /** The SQLite file, once the index is open (another thread may open it to read). */
  file(): string | undefined
  /** Ends the scan and the index thread; closes the store. */
  close(): Promise<void>
}

/** What createCodeIndex needs. */
export interface CodeIndexOptions {
  workspace: WorkspaceService
  /** Parsers of the index's own (threads apart from the one get_symbols uses): files are parsed on all at once. */
  parsers: SymbolParser[]
  /**
   * Opens the read side (this thread: queries and the scan's list of what is indexed) and names the SQLite file
   * the index thread writes.
   */
  open: () => { store: IndexStore, file: string }
  log: Logger
  /** A scan older than this is redone when a call asks (default 30 s). */
  staleMs?: number
  /** Watch the folders each scan walked and scan again shortly after a change (codeIndex `watch`). */
  watch?: boolean
  /** The index thread's module (default: index-worker.js beside this module). */
  workerUrl?: URL
}

/** A write batch holds about this much: each file counts its text plus FILE_WEIGHT (so ~100 small files, or fewer big ones). */
const BATCH_WEIGHT = 8 * 1024 * 1024
const FILE_WEIGHT = 80 * 1024
/** A file the scan found new or changed. */
interface Changed { relative: string, fsPath: string, language: SymbolLanguage }

/** Opens nothing until the first start() or ready(): a command that only lists tools never creates the index. */
export function createCodeIndex (options: CodeIndexOptions): CodeIndex {
  const { workspace, parsers, log } = options
  const staleMs = options.staleMs ?? 30_000
  const status: CodeIndexStatus = { state: 'building', pending: 0, done: 0, files: 0, chunks: 0, symbols: 0 }
  const listeners = new Set<() => void>()
  const scanned: Array<(changed: number) => void> = []
  const notify = (): void => { for (const listener of listeners) listener() }
  const stop = new AbortController()
  let scanning: Promise<void> | undefined
  /** A change was seen while a scan ran: scan again after it. */
  let again = false
  let opened: { store: IndexStore, file: string, thread: RequestThread, ask: <T extends object>(request: IndexRequest) => Promise<T> } | undefined

  function open (): NonNullable<typeof opened> {
    const { store, file } = options.open()
    const data: IndexThreadData = { indexFile: file, roots: workspace.roots.map(r => ({ name: r.name, path: r.path })), watch: options.watch === true }
    const thread = startRequestThread(options.workerUrl ?? threadModule('index-worker'), data, 'index', (notice) => {
      if (notice.notice === 'changed') rescanSoon()
      else log.warn({ reason: (notice as { why?: string }).why }, 'code index: folders no longer watched; the index is refreshed when a call finds it older than 30 s')
    })
    // Answers carry the counts after them: counting a million rows is the thread's work.
    const ask = async <T extends object>(request: IndexRequest): Promise<T> => {
      const answer = await thread.request<T & { counts?: StoreCounts }>(request)
      Object.assign(status, answer.counts)
      return answer
    }
    // What is indexed already, for get_workspace_info while the first scan runs (not awaited: the scan queues behind).
    ask({ counts: true }).catch(() => undefined)
    return { store, file, thread, ask }
  }

  async function readParsed (entry: Changed, parser: SymbolParser, signal: AbortSignal): Promise<ParsedFile> {
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

  async function scan (signal: AbortSignal): Promise<void> {
    const { ask } = opened ??= open()
    const started = Date.now()
    // The thread walks (its own jail over the same roots, synchronous calls) and compares with what it holds.
    const found = await ask<ScanResult>({ scan: true })
    signal.throwIfAborted()
    // The walk kept only names of a language the parser reads.
    const changed: Changed[] = found.changed.map(f => ({ ...f, language: symbolLanguageOf(f.fsPath) as SymbolLanguage }))
    if (found.gone.length > 0) await ask({ remove: found.gone })
    status.pending = changed.length
    status.done = 0
    let batch: ParsedFile[] = []
    let weight = 0
    let written: Promise<void> = Promise.resolve()
    const flush = async (): Promise<void> => {
      const files = batch
      if (files.length === 0) return
      batch = []
      weight = 0
      // Batches are written one after another while the next ones are parsed; a lane waits for the write
      // before this one, so at most two batches wait in memory.
      const previous = written
      written = previous.then(async () => {
        await ask({ write: files })
        status.done += files.length
        notify()
      })
      await previous
    }
    // One lane per parser thread, each taking the next file: the parse is the work, and it runs on all of them.
    let next = 0
    const lane = async (parser: SymbolParser): Promise<void> => {
      while (next < changed.length) {
        signal.throwIfAborted()
        const file = changed[next++]
        try {
          const parsed = await readParsed(file, parser, signal)
          batch.push(parsed)
          weight += parsed.text.length + FILE_WEIGHT
        } catch (err) {
          signal.throwIfAborted()
          // A file that vanished or changed kind since the walk, or one the parser gave up on: the next scan retries it.
          log.debug({ err, file: file.relative }, 'file not indexed')
          status.done++
          continue
        }
        if (weight >= BATCH_WEIGHT) await flush()
      }
    }
    await Promise.all(parsers.map(lane))
    await flush()
    await written
    Object.assign(status, { state: 'ready', lastScan: Date.now(), lastScanMs: Date.now() - started })
    delete status.error
    log.info({ files: status.files, chunks: status.chunks, symbols: status.symbols, changed: changed.length, removed: found.gone.length, ms: status.lastScanMs }, 'code index scan finished')
    for (const listener of scanned) listener(changed.length + found.gone.length)
  }

  /** A watched folder changed: scan now, or again once the running scan is done (it may have passed the change). */
  function rescanSoon (): void {
    if (scanning === undefined) rescan()
    else again = true
  }

  function rescan (): void {
    if (scanning !== undefined || stop.signal.aborted) return
    again = false
    scanning = scan(stop.signal).catch((err: unknown) => {
      if (stop.signal.aborted) return
      // Scans fail with Errors only: the walk's tool errors, a write the thread refused, the thread's own error.
      status.error = (err as Error).message
      if (status.state === 'building') status.state = 'failed'
      log.warn({ err }, 'code index scan failed')
    }).finally(() => {
      scanning = undefined
      notify()
      if (again) rescan()
    })
  }
  return {
    status: () => ({ ...status }),
    start: () => { if (opened === undefined) rescan() },
    async ready (waitMs, signal, progress) {
      if (opened === undefined) rescan()
      if (status.state !== 'building') {
        // A failed index is tried again by every call (a busy walk passes; a dead thread fails at once).
        if (status.state === 'failed' || (status.lastScan !== undefined && Date.now() - status.lastScan > staleMs)) rescan()
        return status.state === 'ready'
      }
      return await new Promise<boolean>((resolve) => {
        const finish = (): void => {
          clearTimeout(timer)
          listeners.delete(onChange)
          signal.removeEventListener('abort', finish)
          resolve(status.state === 'ready')
        }
        const onChange = (): void => {
          progress?.(status.done, status.pending)
          if (status.state !== 'building') finish()
        }
        const timer = setTimeout(finish, waitMs)
        listeners.add(onChange)
        signal.addEventListener('abort', finish, { once: true })
      })
    },
    findSymbols: (...args) => opened?.store.findSymbols(...args) ?? [],
    searchChunks: (...args) => opened?.store.searchChunks(...args) ?? [],
    chunksById: (ids) => opened?.store.chunksById(ids) ?? [],
    onScanned: (listener) => { scanned.push(listener) },
    file: () => opened?.file,
    async close () {
      stop.abort()
      await scanning
      const closing = opened
      opened = undefined
      if (closing === undefined) return
      await closing.thread.terminate()
      closing.store.close()
    }
  }
}
