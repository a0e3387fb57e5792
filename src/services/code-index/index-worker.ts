import fs from 'node:fs'
import type { TreeSitterLocation } from '../symbols/index.js'
import { parseAndWrite } from './index-build.js'
import { createIndexParser } from './index-parser.js'
import { acquireLease, type IndexLease, type LeaseHolder } from './index-lease.js'
import { loadSqlite } from './index-schema.js'
import { openIndexWriter, type IndexWriter } from './index-writer.js'
import { finalizeClosedConnections } from './index-reader.js'
import { storeProblemOf } from './store-errors.js'
import { createFolderWatch, type FolderWatchOptions } from './folder-watch.js'
import { createRescanMemory, rescannable, scanFolders } from './index-rescan.js'
import { laneThread, scanTree, scanWorkspace } from './index-scan.js'
import { DetailedError, serveAs, type Notify } from '../threads/index.js'
import type { WorkspaceRoot } from '../workspace/index.js'

/**
 * A request to the index thread. A scan takes the index's lease (unless told not to), walks, compares with what
 * is indexed, reads, parses and writes what changed, marks the index complete and lets the lease go; it answers
 * with what it did, or with who holds the lease. `abort` is heeded at once (a running scan stops between two
 * files); `release` lets the lease go. While a scan runs, the thread sends `{ notice: 'progress', done, pending }`;
 * with `watch`, `{ notice: 'changed' }` when a watched folder changed and `{ notice: 'watch-failed', why }` when it
 * gives watching up.
 */
export type IndexRequest = { scan: true } | { abort: true } | { release: true } | { close: true }

/** The answer to a scan: what it found and did (`skipped`: files it could not read or parse, the first one's reason), or who holds the lease (nothing was walked). */
export type ScanAnswer = { busy?: undefined, changed: number, gone: number, bytes: number, skipped: number, skippedWhy?: string } | { busy: LeaseHolder }

/** What the index thread is started with. */
export interface IndexThreadData {
  indexFile: string
  /** Shared with the serving thread: 1 while a call a client waits on runs (the build yields between files). */
  yieldFlag?: Int32Array
  /** The served roots, walked again by the thread's own scan. */
  roots: WorkspaceRoot[]
  /** Where tree-sitter is: the thread starts its own parser threads. */
  treeSitter: TreeSitterLocation
  /** Parser threads. */
  threads: number
  /** Watch the folders each scan walked, and say when one changed. */
  watch: boolean
  /** Take the index's lease for each scan (false: the caller holds it, as the `index` command does). */
  lease: boolean
  /** Largest size of the index file, in bytes. */
  maxBytes?: number
  /** The writer's journal (`delete` for a staging file to be published). Default `wal`. */
  journal?: 'wal' | 'delete'
  /** The parser threads' niceness (see threads/priority); unset, they keep the process's. */
  niceness?: number
  /** Names the leases this thread takes (see dropLease). */
  leaseToken?: string
  /** A scan that wrote this many files merges the references' index after it. Default OPTIMIZE_AFTER. */
  optimizeAfter?: number
}

/** A scan that wrote this many files merges the references' index after it (a term's lookup then reads one segment). */
export const OPTIMIZE_AFTER = 500

/** How often a running scan reports its progress, ms. */
const PROGRESS_MS = 250
/** How long the build waits for a call to end before its next file, at most, and how often it looks. */
const YIELD_MAX_MS = 1000
const YIELD_STEP_MS = 5

/** What the index thread says of its folder watch: a folder changed, or watching was given up (and why). */
export function watchNotices (notify: Notify): Pick<FolderWatchOptions, 'onChange' | 'onFail'> {
  return { onChange: () => notify({ notice: 'changed' }), onFail: why => notify({ notice: 'watch-failed', why }) }
}

/**
 * The index thread's handler: walking, reading and SQLite writes happen here, never on the event loop that serves
 * requests; parsing, chunking and tokenizing in its parser threads. Requests are handled one at a time, in order,
 * but an abort is heeded at once; `close` lets the lease go and closes the writer and the watch before the thread
 * is ended. An error is answered with the store problem it is (a full disk, a read-only
 * file system), when it is one.
 */
export function indexHandler (data: IndexThreadData, notify: Notify, sqlite = loadSqlite()): (request: IndexRequest) => Promise<object> {
  const parsers = Array.from({ length: data.threads }, () => createIndexParser(data.treeSitter, { niceness: data.niceness, yieldFlag: data.yieldFlag }))
  // The writer stays open between scans (closing one leaves its statements to the collector, see index-reader);
  // writes happen only during a scan, with the lease.
  let writer: IndexWriter | undefined
  let lease: IndexLease | undefined
  // An abort stops the scan running and those queued behind it: each takes the signal current when it was asked for.
  let aborts = new AbortController()
  const release = (): void => {
    lease?.release()
    lease = undefined
  }
  // With codeIndex `watch`: the folders each scan walked, watched until the next one. What the watch saw change
  // since the last scan began is all that changed: the next scan lists only those folders (index-rescan.ts), unless
  // the last scan failed or the watch gave up (`walked` unset), and the whole tree is walked.
  const memory = createRescanMemory(watchNotices(notify), data.watch)
  const watch = data.watch ? createFolderWatch(memory.watch) : undefined
  let bytes = 0
  const open = (): IndexWriter => {
    if (sqlite === null) throw new Error('@photostructure/sqlite is not installed')
    // Another file in its place (an `index` command published one while this server waited): write that one.
    if (writer !== undefined && writer.inode !== fs.statSync(data.indexFile, { throwIfNoEntry: false })?.ino) {
      writer.close()
      writer = undefined
      // What this thread walked says nothing of that file: the next scan walks the whole tree.
      memory.forget()
    }
    writer ??= openIndexWriter(sqlite, data.indexFile, { maxBytes: data.maxBytes, journal: data.journal })
    return writer
  }
  /** While a call a client waits on runs, the next file waits (a second at most: a stream of calls never stalls the build). */
  const flag = data.yieldFlag
  const pause = flag === undefined
    ? undefined
    : async (): Promise<void> => {
      for (let waited = 0; Atomics.load(flag, 0) === 1 && waited < YIELD_MAX_MS; waited += YIELD_STEP_MS) {
        await new Promise(resolve => setTimeout(resolve, YIELD_STEP_MS))
      }
    }
  async function scan (signal: AbortSignal): Promise<ScanAnswer> {
    signal.throwIfAborted()
    if (data.lease) {
      const taken = acquireLease(data.indexFile, Date.now(), undefined, data.leaseToken)
      if ('heldBy' in taken) return { busy: taken.heldBy }
      lease = taken
    }
    try {
      const store = open()
      // A jail of its own for each scan: its rule caches (every path tested) go with it, not kept for the process.
      const workspace = await scanWorkspace(data.roots)
      const { changes, walked } = memory.take()
      const found = walked !== undefined && rescannable(changes, walked)
        ? await scanFolders(workspace, changes, walked, { filesUnder: store.filesUnder, bytes }, signal)
        : await scanTree(workspace, { size: store.counts().files, files: store.files }, laneThread(data.roots, { niceness: data.niceness }), signal)
      watch?.update(found.folders)
      bytes = found.bytes
      if (found.gone.length > 0) await store.remove(found.gone)
      let done = 0
      let skipped = 0
      let skippedWhy: string | undefined
      const report = (): void => notify({ notice: 'progress', done, pending: found.changed.length, bytes: found.bytes })
      report()
      const timer = setInterval(report, PROGRESS_MS)
      try {
        await parseAndWrite(found.changed, { workspace, parsers, write: (entries) => store.write(entries), progress: (n) => { done = n }, pause, skipped: (file, err) => { skipped++; skippedWhy ??= `${file.relative}: ${String(err)}` } }, signal)
      } finally {
        clearInterval(timer)
        report()
      }
      if (found.changed.length >= (data.optimizeAfter ?? OPTIMIZE_AFTER)) store.optimize()
      store.finished(Date.now())
      memory.scanned(found.folders)
      return { changed: found.changed.length, gone: found.gone.length, bytes: found.bytes, skipped, ...(skippedWhy === undefined ? {} : { skippedWhy }) }
    } finally {
      release()
    }
  }
  /**
   * Lets everything go while this thread can still run JavaScript: SQLite's objects are finalized here, not when
   * the thread is ended — a finalizer run by terminate() opens a handle scope in an environment that can no longer
   * call into JavaScript, and node-addon-api's ObjectWrap destructor then throws, which aborts the whole process
   * ("terminate called after throwing an instance of 'Napi::Error'", seen once in the suite).
   */
  async function closeAll (): Promise<object> {
    release()
    watch?.close()
    writer?.close()
    writer = undefined
    await finalizeClosedConnections()
    return {}
  }
  let queue: Promise<unknown> = Promise.resolve()
  return async (request) => {
    if ('abort' in request) {
      aborts.abort()
      aborts = new AbortController()
      return {}
    }
    const signal = aborts.signal
    const answer = queue.then(async () => {
      try {
        if ('close' in request) return await closeAll()
        if (!('scan' in request)) {
          release()
          return {}
        }
        return await scan(signal)
      } catch (err) {
        const problem = storeProblemOf(err)
        throw problem === undefined ? err : new DetailedError((err as Error).message, { problem }, { cause: err })
      }
    })
    queue = answer.catch(() => undefined)
    return await answer
  }
}

serveAs('index-worker', indexHandler)
