import type { DatabaseSyncInstance } from '@photostructure/sqlite'
import type { loadSqlite } from './index-store.js'

/** A chunk without a vector for the current model, and where its text is. */
export interface MissingChunk {
  id: number
  hash: string
  /** The file's real path. */
  path: string
  start: number
  end: number
}

/** The vectors table of an index file, on a connection of its own (the vector thread's). */
export interface VectorStore {
  /** Up to `limit` chunks after chunk `after` (by id) whose text has no vector for (model, dims). */
  missing(model: string, dims: number, after: number, limit: number): MissingChunk[]
  /** Stores vectors by content hash (one transaction); calls `each` for every chunk that has one of those hashes. */
  put(model: string, dims: number, items: ReadonlyArray<{ hash: string, vector: Float32Array }>, each: (chunk: number, file: number, vector: Float32Array) => void): void
  /** Calls `each` for every chunk with a vector for (model, dims), by chunk id. */
  load(model: string, dims: number, each: (chunk: number, file: number, vector: Float32Array) => void): void
  /** Every file's id and real path. */
  files(): Map<number, string>
  /** Deletes the vectors no chunk has any more (code deleted or changed); returns how many. */
  prune(): number
  close(): void
}

const vectorOf = (blob: Uint8Array): Float32Array => new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength))

/** Opens the vectors side of the index at `file`; the tables are the index store's (openIndexStore made them). */
export function openVectorStore (sqlite: NonNullable<ReturnType<typeof loadSqlite>>, file: string): VectorStore {
  const db: DatabaseSyncInstance = new sqlite.DatabaseSync(file)
  db.exec('PRAGMA busy_timeout = 10000')
  const q = {
    missing: db.prepare('SELECT c.id, c.hash, f.path, c.start, c.end FROM chunks c JOIN files f ON f.id = c.file WHERE c.id > ? ' +
      'AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.hash = c.hash AND v.model = ? AND v.dims = ?) ORDER BY c.id LIMIT ?'),
    put: db.prepare('INSERT OR REPLACE INTO vectors (hash, model, dims, vector) VALUES (?, ?, ?, ?)'),
    chunksOf: db.prepare('SELECT id, file FROM chunks WHERE hash = ?'),
    load: db.prepare('SELECT c.id, c.file, v.vector FROM chunks c JOIN vectors v ON v.hash = c.hash AND v.model = ? AND v.dims = ? ORDER BY c.id'),
    files: db.prepare('SELECT id, path FROM files'),
    prune: db.prepare('DELETE FROM vectors WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = vectors.hash)')
  }
  return {
    missing: (model, dims, after, limit) => q.missing.all(after, model, dims, limit) as unknown as MissingChunk[],
    put (model, dims, items, each) {
      const holders: Array<{ id: number, file: number, vector: Float32Array }> = []
      db.exec('BEGIN')
      try {
        for (const { hash, vector } of items) {
          q.put.run(hash, model, dims, new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength))
          for (const row of q.chunksOf.all(hash) as Array<{ id: number, file: number }>) holders.push({ ...row, vector })
        }
        db.exec('COMMIT')
      } catch (err) {
        db.exec('ROLLBACK')
        throw err
      }
      // Only what was committed reaches the caller.
      for (const { id, file, vector } of holders) each(id, file, vector)
    },
    load (model, dims, each) {
      for (const row of q.load.iterate(model, dims) as Iterable<{ id: number, file: number, vector: Uint8Array }>) each(row.id, row.file, vectorOf(row.vector))
    },
    files: () => new Map((q.files.all() as Array<{ id: number, path: string }>).map(row => [row.id, row.path])),
    prune: () => Number(q.prune.run().changes),
    close: () => db.close()
  }
}
