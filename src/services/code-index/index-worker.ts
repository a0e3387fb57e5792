import { parentPort, workerData } from 'node:worker_threads'
import { buildOutline } from '../outline.js'
import type { RawDefinition } from '../symbol-parser.js'
import { chunkFile } from './chunker.js'
import { chunkHash, chunkText } from './chunk-text.js'
import { codeTokens } from './code-tokens.js'
import { loadSqlite, openIndexStore, type FileEntry } from './index-store.js'
import { createFolderWatch } from './folder-watch.js'
import { laneThread, scanTree, scanWorkspace, walkSources, type ScanLane } from './index-scan.js'
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
 * A request to the index thread, answered with the counts after it (a scan also with what changed). With
 * `watch`, the thread also sends `{ notice: 'changed' }` when a watched folder changed, and
 * `{ notice: 'watch-failed', why }` when it gives watching up.
 */
export type IndexRequest = { write: ParsedFile[] } | { remove: string[] } | { scan: true } | { counts: true }

/** What the index thread is started with. */
export interface IndexThreadData {
  indexFile: string
  /** The served roots, walked again by the thread's own scan. */
  roots: WorkspaceRoot[]
  /** Watch the folders each scan walked, and say when one changed. */
  watch: boolean
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
// requests. Each request is answered with its id once its transaction committed (or with the error).
/* c8 ignore start */
if (parentPort !== null && (workerData as Partial<IndexThreadData> | undefined)?.indexFile !== undefined) {
  const port = parentPort
  const data = workerData as IndexThreadData
  const sqlite = loadSqlite()
  const store = sqlite === null ? null : openIndexStore(sqlite, data.indexFile)
  // With codeIndex `watch`: the folders each scan walked, watched until the next one.
  const watch = data.watch
    ? createFolderWatch({ onChange: () => port.postMessage({ notice: 'changed' }), onFail: why => port.postMessage({ notice: 'watch-failed', why }) })
    : undefined
  // Requests are handled one at a time, in order: a write never lands in the middle of a scan's comparison.
  let queue: Promise<void> = Promise.resolve()
  port.on('message', (request: IndexRequest & { id: number }) => {
    queue = queue.then(async () => {
      try {
        if (store === null) throw new Error('@photostructure/sqlite is not installed')
        let answer = {}
        if ('write' in request) store.write(request.write.map(entryOf))
        else if ('remove' in request) store.remove(request.remove)
        else if ('scan' in request) {
          // A jail of its own for each scan: its rule caches (every path tested) go with it, not kept for the process.
          const workspace = await scanWorkspace(data.roots)
          const { changed, gone, folders } = await scanTree(workspace, { size: store.counts().files, files: store.files }, laneThread(new URL(import.meta.url), data.roots))
          watch?.update(folders)
          answer = { changed, gone }
        }
        // The counts go back with every answer (kept in meta: reading them costs nothing).
        port.postMessage({ id: request.id, ...answer, counts: store.counts() })
      } catch (err) {
        port.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err) })
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
