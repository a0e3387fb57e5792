import fs from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { buildOutline } from '../outline.js'
import type { RawDefinition } from '../symbol-parser.js'
import { chunkFile } from './chunker.js'
import { chunkHash, chunkText } from './chunk-text.js'
import { codeTokens } from './code-tokens.js'
import { acquireLease, type IndexLease, type LeaseHolder } from './index-lease.js'
import { loadSqlite, type FileEntry } from './index-schema.js'
import { openIndexWriter, type IndexWriter } from './index-writer.js'
import { storeProblemOf } from './store-errors.js'
import { createFolderWatch } from './folder-watch.js'
import { laneThread, scanTree, scanWorkspace, walkSources, type ScanLane, type ScanResult } from './index-scan.js'
import type { WorkspaceRoot } from '../workspace.js'

/** One file as the scan read and parsed it. */
export interface ParsedFile {
  path: string
  /** Display path: its words are searchable too ("upload" finds src/upload/…). */
  shown: string
  size: number
  mtimeMs: number
  language: string
  text: string
  definitions: RawDefinition[]
}

/**
 * A request to the index thread. A scan takes the index's lease (unless told not to) and opens the writer; the
 * writes and removals of that scan follow, and `finish` (or `abandon`, when it failed) releases both. With
 * `watch`, the thread also sends `{ notice: 'changed' }` when a watched folder changed, and `{ notice:
 * 'watch-failed', why }` when it gives watching up.
 */
export type IndexRequest = { scan: true } | { write: ParsedFile[] } | { remove: string[] } | { finish: number } | { abandon: true }

/** The answer to a scan: what changed, or who holds the lease (nothing was walked). */
export type ScanAnswer = (ScanResult & { busy?: undefined }) | { busy: LeaseHolder }

/** What the index thread is started with. */
export interface IndexThreadData {
  indexFile: string
  /** The served roots, walked again by the thread's own scan. */
  roots: WorkspaceRoot[]
  /** Watch the folders each scan walked, and say when one changed. */
  watch: boolean
  /** Take the index's lease for each scan (false: the caller holds it, as the `index` command does). */
  lease: boolean
  /** Largest size of the index file, in bytes. */
  maxBytes?: number
  /** The writer's journal (`delete` for a staging file to be published). Default `wal`. */
  journal?: 'wal' | 'delete'
}

/** Turns a parsed file into what the index stores: its outline, its chunks and each chunk's search tokens. */
export function entryOf (file: ParsedFile): FileEntry {
  const lines = file.text.split('\n')
  const symbols = buildOutline(file.definitions, lines)
  const where = codeTokens(file.shown).join(' ')
  const chunks = chunkFile(lines, symbols).map(chunk => ({
    ...chunk,
    hash: chunkHash(chunkText(lines, chunk.start, chunk.end)),
    tokens: `${where} ${codeTokens(chunk.symbol).join(' ')} ${codeTokens(lines.slice(chunk.start - 1, chunk.end).join('\n')).join(' ')}`
  }))
  return { path: file.path, size: file.size, mtimeMs: file.mtimeMs, language: file.language, chunks, symbols }
}

// The thread itself: chunking, tokenizing and SQLite writes happen here, never on the event loop that serves
// requests. Each request is answered with its id once its transaction committed (or with the error, and the
// store problem it is: a full disk, a read-only file system).
/* c8 ignore start */
if (parentPort !== null && (workerData as Partial<IndexThreadData> | undefined)?.indexFile !== undefined) {
  const port = parentPort
  const data = workerData as IndexThreadData
  const sqlite = loadSqlite()
  // The writer stays open between scans (closing one leaves its statements to the collector, see index-reader);
  // writes happen only from a scan to its finish, with the lease.
  let writer: IndexWriter | undefined
  let lease: IndexLease | undefined
  const release = (): void => {
    lease?.release()
    lease = undefined
  }
  // With codeIndex `watch`: the folders each scan walked, watched until the next one.
  const watch = data.watch
    ? createFolderWatch({ onChange: () => port.postMessage({ notice: 'changed' }), onFail: why => port.postMessage({ notice: 'watch-failed', why }) })
    : undefined
  const open = (): IndexWriter => {
    if (sqlite === null) throw new Error('@photostructure/sqlite is not installed')
    // Another file in its place (an `index` command published one while this server waited): write that one.
    if (writer !== undefined && writer.inode !== fs.statSync(data.indexFile, { throwIfNoEntry: false })?.ino) {
      writer.close()
      writer = undefined
    }
    writer ??= openIndexWriter(sqlite, data.indexFile, { maxBytes: data.maxBytes, journal: data.journal })
    return writer
  }
  async function handle (request: IndexRequest): Promise<object> {
    if ('scan' in request) {
      release()
      if (data.lease) {
        const taken = acquireLease(data.indexFile)
        if ('heldBy' in taken) return { busy: taken.heldBy }
        lease = taken
      }
      const store = open()
      // A jail of its own for each scan: its rule caches (every path tested) go with it, not kept for the process.
      const workspace = await scanWorkspace(data.roots)
      const found = await scanTree(workspace, { size: store.counts().files, files: store.files }, laneThread(new URL(import.meta.url), data.roots))
      watch?.update(found.folders)
      return { changed: found.changed, gone: found.gone, bytes: found.bytes }
    }
    if ('write' in request) open().write(request.write.map(entryOf))
    else if ('remove' in request) open().remove(request.remove)
    else if ('finish' in request) {
      open().finished(request.finish)
      release()
    } else release()
    return {}
  }
  // Requests are handled one at a time, in order: a write never lands in the middle of a scan's comparison.
  let queue: Promise<void> = Promise.resolve()
  port.on('message', (request: IndexRequest & { id: number }) => {
    queue = queue.then(async () => {
      try {
        port.postMessage({ id: request.id, ...await handle(request) })
      } catch (err) {
        // A failed step ends the scan: the lease goes with it, and the next scan starts afresh.
        release()
        port.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err), problem: storeProblemOf(err) })
      }
    })
  })
}

// A lane of a scan (started by the thread above for one walk): walks its share and answers once.
if (parentPort !== null && (workerData as { scanLane?: ScanLane } | undefined)?.scanLane !== undefined) {
  const port = parentPort
  const { roots, scanLane } = workerData as { roots: WorkspaceRoot[], scanLane: ScanLane }
  scanWorkspace(roots).then(async workspace => await walkSources(workspace, scanLane)).then(
    found => port.postMessage({ found }),
    (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) }))
}
/* c8 ignore stop */
