import { parentPort, workerData } from 'node:worker_threads'
import { buildOutline } from '../outline.js'
import type { RawDefinition } from '../symbol-parser.js'
import { chunkFile } from './chunker.js'
import { chunkHash, chunkText } from './chunk-text.js'
import { codeTokens } from './code-tokens.js'
import { loadSqlite, openIndexStore, type FileEntry } from './index-store.js'

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

/** A request to the index thread. */
export type IndexRequest = { write: ParsedFile[] } | { remove: string[] }

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
if (parentPort !== null && (workerData as { indexFile?: string } | undefined)?.indexFile !== undefined) {
  const port = parentPort
  const sqlite = loadSqlite()
  const store = sqlite === null ? null : openIndexStore(sqlite, (workerData as { indexFile: string }).indexFile)
  port.on('message', (request: IndexRequest & { id: number }) => {
    try {
      if (store === null) throw new Error('@photostructure/sqlite is not installed')
      if ('write' in request) store.write(request.write.map(entryOf))
      else store.remove(request.remove)
      // The counts go back with the answer: counting a million rows is this thread's work, not the event loop's.
      port.postMessage({ id: request.id, counts: store.counts() })
    } catch (err) {
      port.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err) })
    }
  })
}
/* c8 ignore stop */
