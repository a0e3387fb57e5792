import path from 'node:path'
import fs from 'node:fs'
import { randomUUID } from 'node:crypto'
import type { Logger } from '../../base/logger.js'
import type { TreeSitterLocation } from '../symbols/index.js'
import type { WorkspaceService } from '../workspace/index.js'
import { freeBytes } from './index-file.js'
import { dropLease, holderText } from './index-lease.js'
import { followIndexFile } from './index-reader.js'
import type { ChunkRow, NameMatch, PathScope, Sqlite, StoreCounts, SymbolRow } from './index-schema.js'
import type { IndexRequest, IndexThreadData, ScanAnswer } from './index-worker.js'
import { INDEX_NICENESS, startThread, threadModule, ThreadError, type Thread } from '../threads/index.js'
import type { StoreProblem } from './store-errors.js'
import type { ReferenceQueries } from './reference-reader.js'
import type { MapQueries } from './map-reader.js'
import type { Activity } from '../activity.js'

/** Why the index cannot be written (or, shared, read), with what an operator needs to act on it. */
export interface IndexProblem {
  /** A store problem; `size-limit` when the file reached indexMaxMb; `missing` when a shared index was never published. */
  kind: StoreProblem | 'size-limit' | 'missing'
  stateDir: string
  file: string
  /** The error as the store reported it. */
  detail: string
  /** Free space on the state folder's file system when it failed. */
  freeBytes?: number
  /** About how large the whole index grows for the source the last scan found. */
  neededBytes?: number
  /** When a scan tries again (ms since the epoch); none for a shared index (the next published one is picked up). */
  retryAt?: number
}

/** Where the index stands. */
export interface CodeIndexStatus extends StoreCounts {
  /**
   * `building` until an index is complete (a finished scan, now or by an earlier run), then `ready` (rescans run
   * behind it); `failed` when the first scan failed; `unavailable` when the store cannot be written (see problem).
   */
  state: 'building' | 'ready' | 'failed' | 'unavailable'
  /** A scan is running now (behind a ready index, a refresh). */
  scanning: boolean
  /** Files the running scan found new or changed, and how many of them are done. */
  pending: number
  done: number
  /** When the last scan of this process finished (ms since the epoch), and how long it took. */
  lastScan?: number
  lastScanMs?: number
  /** When the index on disk was last complete: its age (a shared index: when it was published). */
  built?: number
  error?: string
  problem?: IndexProblem
  /** Another process holds the index's lease and writes it; this one answers from what it writes. */
  writer?: string
  /** How often writing the index failed since start (ENOSPC, SQLITE_FULL, EROFS, EIO …). */
  failures: number
  /** Bytes of source the last scan found (what the index's size follows). */
  sourceBytes?: number
}

/** The symbol and chunk index of the served roots, built and kept fresh in the background. */
export interface CodeIndex {
  status(): CodeIndexStatus
  /** Opens the index and starts the first scan (the server calls it once it serves; a printing command never does). */
  start(): void
  /**
   * Waits (at most `waitMs`) for a complete index, reporting progress; true when there is one. A call that gets
   * false answers from what is indexed so far. Also starts a rescan when the last one is stale.
   */
  ready(waitMs: number, signal: AbortSignal, progress?: (done: number, total: number) => void): Promise<boolean>
  findSymbols(nameLower: string, match: NameMatch, kind: string | undefined, scope: PathScope, limit: number): SymbolRow[]
  searchChunks(terms: readonly string[], scope: PathScope, limit: number): ChunkRow[]
  /** The chunks with these ids that are still indexed. */
  chunksById(ids: readonly number[]): ChunkRow[]
  /** Where names are used, and what the outline says around them. */
  readonly references: ReferenceQueries
  /** What a repository map reads: source files, their definitions, how much each name is used. */
  readonly map: MapQueries
  /** Calls `listener` after every scan that finished, with how many files it wrote or removed. */
  onScanned(listener: (changed: number) => void): void
  /** The SQLite file, once the index is open (another thread may open it to read). */
  file(): string | undefined
  /** Ends the scan and the index thread (releasing the lease); closes the reader. */
  close(): Promise<void>
}

/** What createCodeIndex needs. */
export interface CodeIndexOptions {
  workspace: WorkspaceService
  /** Where tree-sitter is: the index thread starts parser threads of its own (apart from get_symbols'). */
  treeSitter: TreeSitterLocation
  /** How many parser threads (files are parsed on all at once). Default 1. */
  threads?: number
  sqlite: Sqlite
  /** The index file (its folder is the state folder). */
  file: string
  log: Logger
  /**
   * `write` (default): scan and write, one writer at a time by the file's lease. `shared`: read an index another
   * process publishes (the `index` command), never scanning or writing, following each new one.
   */
  mode?: 'write' | 'shared'
  /** A scan older than this is redone when a call asks (default 30 s). */
  staleMs?: number
  /** Watch the folders each scan walked and scan again shortly after a change (codeIndex `watch`). */
  watch?: boolean
  /** Largest size of the index file in bytes; beyond it the index is unavailable as on a full disk. */
  maxBytes?: number
  /** false: the caller holds the file's lease already (the `index` command). Default true. */
  lease?: boolean
  /** The writer's journal: `delete` for a staging file to be published whole. Default `wal`. */
  journal?: 'wal' | 'delete'
  /** After the store failed, the first retry waits this long, doubling up to 30 min (default 60 s). */
  retryMs?: number
  /** The index thread's module (default: index-worker.js beside this module). */
  workerUrl?: URL
  /** The server's running calls: while one that does not wait for the index runs, the build stops between files. */
  activity?: Activity
}

/** Index bytes per byte of source, measured on real trees (bench `sizing`, README Deploy): for the needed-space estimate. */
export const INDEX_BYTES_PER_SOURCE_BYTE = 1.3
/** How often a call waiting on an index another server writes looks at its file, ms. */
const FOLLOW_MS = 200
/** How long close() lets a running scan stop between two files before it ends the thread, ms. */
const CLOSE_GRACE_MS = 1000
const MAX_RETRY_MS = 30 * 60_000

/** Opens nothing until the first start() or ready(): a command that only lists tools never creates the index. */
export function createCodeIndex (options: CodeIndexOptions): CodeIndex {
  const { workspace, log, sqlite, file } = options
  const shared = options.mode === 'shared'
  const staleMs = options.staleMs ?? 30_000
  const retryMs = options.retryMs ?? 60_000
  const stateDir = path.dirname(file)
  // A stat a second at most: a rebuilt or newly published file is found within a second of its rename.
  const reader = followIndexFile(sqlite, file, shared, 1000)
  const progress = { scanning: false, pending: 0, done: 0, failures: 0 } as Pick<CodeIndexStatus, 'scanning' | 'pending' | 'done' | 'failures' | 'lastScan' | 'lastScanMs' | 'error' | 'problem' | 'writer'>
  const listeners = new Set<() => void>()
  const scanned: Array<(changed: number) => void> = []
  const notify = (): void => { for (const listener of listeners) listener() }
  const stop = new AbortController()
  let scanning: Promise<void> | undefined
  let started = false
  /** A change was seen while a scan ran: scan again after it. */
  let again = false
  let thread: Thread | undefined
  // Names this index's leases, so one its thread could not let go is told from another holder's in this process.
  const leaseToken = randomUUID()
  let retry: NodeJS.Timeout | undefined
  let retries = 0
  /** Source bytes the last scan found: what the index's size follows. */
  let sourceBytes: number | undefined
  /** Whether the file held a complete index when the running scan began. */
  let completeBefore = false

  // Set while a call that does not wait for the index runs: the index thread's build stops between two files
  // (for a second at most per file) and lets it have the cores.
  const yieldFlag = new Int32Array(new SharedArrayBuffer(4))
  const updateYield = (): void => {
    const busy = (options.activity?.running ?? 0) > listeners.size ? 1 : 0
    // Parsers sleeping on the flag wake as soon as it clears.
    if (Atomics.exchange(yieldFlag, 0, busy) === 1 && busy === 0) Atomics.notify(yieldFlag, 0)
  }
  options.activity?.onChange(updateYield)

  function status (): CodeIndexStatus {
    if (shared && started && reader.current() === undefined) {
      progress.problem ??= { kind: 'missing', stateDir, file, detail: 'no index has been published there' }
    } else if (shared) {
      delete progress.problem
    }
    const { counts, complete: onDisk, built } = reader.state()
    // While a scan runs, what the file says of itself races the scan's answer (its last batch commits before
    // the answer arrives): completeness is taken as it was when the scan began, until the answer.
    const complete = progress.scanning ? completeBefore : onDisk
    const state = progress.problem !== undefined
      ? 'unavailable'
      : complete || progress.lastScan !== undefined ? 'ready' : progress.error !== undefined ? 'failed' : 'building'
    return { state, ...counts, ...progress, ...(built === undefined ? {} : { built }), ...(sourceBytes === undefined ? {} : { sourceBytes }) }
  }

  function openThread (): Thread {
    const data: IndexThreadData = {
      indexFile: file,
      yieldFlag,
      roots: workspace.roots.map(r => ({ name: r.name, path: r.path })),
      treeSitter: options.treeSitter,
      threads: options.threads ?? 1,
      watch: options.watch === true,
      lease: options.lease !== false,
      maxBytes: options.maxBytes,
      journal: options.journal,
      niceness: INDEX_NICENESS,
      leaseToken
    }
    return startThread(options.workerUrl ?? threadModule('index-worker', import.meta.url), { name: 'index-worker', data, niceness: INDEX_NICENESS, onNotice })
  }
  /** What the index thread says on its own: a scan's progress, a watched folder changed, watching given up. */
  function onNotice (notice: Record<string, unknown>): void {
    if (notice.notice === 'progress') {
      const { done, pending, bytes } = notice as { done: number, pending: number, bytes: number }
      Object.assign(progress, { done, pending })
      sourceBytes = bytes
      notify()
    } else if (notice.notice === 'changed') {
      rescanSoon()
    } else {
      log.warn({ reason: notice.why }, 'code index: folders no longer watched; the index is refreshed when a call finds it older than 30 s')
    }
  }
  const ask = async <T extends object>(request: IndexRequest): Promise<T> => await (thread ??= openThread()).request<T>(request)

  async function scan (): Promise<void> {
    const began = Date.now()
    // The thread takes the lease, walks (its own jail over the same roots), and reads, parses and writes what changed.
    const found = await ask<ScanAnswer>({ scan: true })
    if (found.busy !== undefined) {
      // Another process writes the index now: answer from what it writes, and look again later.
      progress.writer = holderText(found.busy)
      scheduleRetry(staleMs)
      return
    }
    delete progress.writer
    sourceBytes = found.bytes
    Object.assign(progress, { lastScan: Date.now(), lastScanMs: Date.now() - began })
    delete progress.error
    delete progress.problem
    retries = 0
    const counts = status()
    log.info({ files: counts.files, chunks: counts.chunks, symbols: counts.symbols, changed: found.changed, removed: found.gone, ms: progress.lastScanMs }, 'code index scan finished')
    // Such files are not written, so the next scan tries them again; said here, or an index of none of them looks whole.
    if (found.skipped > 0) log.warn({ skipped: found.skipped, first: found.skippedWhy }, 'code index passed by files it could not read or parse')
    for (const listener of scanned) listener(found.changed + found.gone)
  }

  function scheduleRetry (ms: number): void {
    clearTimeout(retry)
    retry = setTimeout(() => {
      retry = undefined
      rescan()
    }, ms)
    retry.unref()
  }

  /** The store cannot be written: say why, with what to change, and try again later (1 min, doubling to 30). */
  function unavailable (kind: StoreProblem, err: Error): void {
    progress.failures++
    const delay = Math.min(MAX_RETRY_MS, retryMs * 2 ** retries++)
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0
    const atLimit = kind === 'disk-full' && options.maxBytes !== undefined && size + 1024 * 1024 >= options.maxBytes
    progress.problem = {
      kind: atLimit ? 'size-limit' : kind,
      stateDir,
      file,
      detail: err.message,
      freeBytes: freeBytes(stateDir),
      ...(sourceBytes === undefined ? {} : { neededBytes: Math.ceil(sourceBytes * INDEX_BYTES_PER_SOURCE_BYTE) }),
      retryAt: Date.now() + delay
    }
    log.error({ err, problem: progress.problem, retryInMs: delay }, `code index unavailable: ${err.message} (state folder ${stateDir})`)
    scheduleRetry(delay)
  }

  /** A watched folder changed: scan now, or again once the running scan is done (it may have passed the change). */
  function rescanSoon (): void {
    if (scanning === undefined) rescan()
    else again = true
  }

  function rescan (): void {
    if (scanning !== undefined || stop.signal.aborted) return
    again = false
    completeBefore = reader.state().complete
    progress.scanning = true
    scanning = scan().catch((err: unknown) => {
      if (stop.signal.aborted) return
      const problem = err instanceof ThreadError ? err.details.problem as StoreProblem | undefined : undefined
      if (problem !== undefined) return unavailable(problem, err as Error)
      // Scans fail with Errors only: the walk's tool errors, a write the thread refused, the thread's own error.
      progress.error = (err as Error).message
      log.warn({ err }, 'code index scan failed')
    }).finally(() => {
      scanning = undefined
      progress.scanning = false
      notify()
      if (again) rescan()
    })
  }

  function begin (): void {
    if (started) return
    started = true
    if (shared) reader.check()
    else rescan()
  }

  return {
    status,
    start: begin,
    async ready (waitMs, signal, report) {
      begin()
      if (shared) {
        reader.check()
        return status().state === 'ready'
      }
      const now = status()
      if (now.state === 'unavailable') return false
      if (now.state !== 'building') {
        // A failed index is tried again by every call (a busy walk passes; a dead thread fails at once).
        if (now.state === 'failed' || (retry === undefined && Date.now() - (progress.lastScan ?? 0) > staleMs)) rescan()
        return now.state === 'ready'
      }
      return await new Promise<boolean>((resolve) => {
        const finish = (): void => {
          clearTimeout(timer)
          clearInterval(follow)
          listeners.delete(onChange)
          updateYield()
          signal.removeEventListener('abort', finish)
          resolve(status().state === 'ready')
        }
        // Done when the scan ends, unless another server writes the index: then when its file says complete.
        const onChange = (): void => {
          report?.(progress.done, progress.pending)
          if (status().state !== 'building' || (!progress.scanning && progress.writer === undefined)) finish()
        }
        // Another server's build sends no notices here: its file is looked at instead.
        const follow = setInterval(() => {
          if (progress.writer === undefined) return
          reader.check()
          onChange()
        }, FOLLOW_MS)
        const timer = setTimeout(finish, waitMs)
        listeners.add(onChange)
        updateYield()
        signal.addEventListener('abort', finish, { once: true })
      })
    },
    findSymbols: (...args) => reader.findSymbols(...args),
    searchChunks: (...args) => reader.searchChunks(...args),
    chunksById: (ids) => reader.chunksById(ids),
    references: reader.references,
    map: reader.map,
    onScanned: (listener) => { scanned.push(listener) },
    // The file once it is there (another thread opens it itself), whether or not this thread's reader is open now.
    file: () => started && fs.existsSync(file) ? file : undefined,
    async close () {
      stop.abort()
      clearTimeout(retry)
      const closing = thread
      thread = undefined
      if (closing?.serving === false) {
        // Still starting: it has done nothing worth waiting for. A lease it took as it ended is let go here.
        await closing.terminate()
        dropLease(file, leaseToken)
      } else {
        // A running scan stops between two files and lets the lease go (a lock left with this live process's id
        // would hold off a later writer); the thread ends after that.
        const graceful = (async () => {
          await closing?.request({ abort: true }).catch(() => undefined)
          await scanning
          await closing?.request({ close: true }).catch(() => undefined)
        })()
        // A thread slow to stop (a long parse at the lowest priority on a busy machine) is ended anyway: the bins
        // exit soon after close, and an exit while a thread is inside a native call can abort the process.
        let timer: NodeJS.Timeout | undefined
        await Promise.race([graceful, new Promise(resolve => { timer = setTimeout(resolve, CLOSE_GRACE_MS) })])
        clearTimeout(timer)
        await closing?.terminate()
        dropLease(file, leaseToken)
      }
      await scanning
      reader.close()
    }
  }
}
