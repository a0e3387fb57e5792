import type { DatabaseSyncInstance } from '@photostructure/sqlite'
import type { loadSqlite } from './index-schema.js'

/** A chunk without a vector for the current model, and where its text is. */
export interface MissingChunk {
  id: number
  file: number
  hash: string
  /** The file's real path. */
  path: string
  start: number
  end: number
  /** The definition the chunk is or lies in, and its kind (see Chunk). */
  symbol: string
  kind: string
  /** The names of the definitions that start in it, in line order, space-separated ('' for none). */
  names: string
}

/** The vectors table of an index file, on a connection of its own (the vector thread's). */
export interface VectorStore {
  /** The next `limit` chunks after chunk `after`, by id (ids only grow: a chunk written later is further on). */
  chunksAfter(after: number, limit: number): MissingChunk[]
  /** The stored vector of a text for (model, dims), if there is one. */
  vectorOf(model: string, dims: number, hash: string): Float32Array | undefined
  /** Stores vectors by content hash (one transaction); calls `each` for every chunk that has one of those hashes. */
  put(model: string, dims: number, items: ReadonlyArray<{ hash: string, vector: Float32Array }>, each: (chunk: number, file: number, vector: Float32Array) => void): void
  /** Calls `each` for every chunk after chunk `after` with a vector for (model, dims), in no particular order. */
  load(model: string, dims: number, after: number, each: (chunk: number, file: number, vector: Float32Array) => void): void
  /** The ids of every chunk indexed now. */
  chunkIds(): Set<number>
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
  // Chunks are looked up by text only for vectors: that index is made here, once, so a code index without
  // embeddings never pays for keeping it up to date (a random-order key over every chunk).
  db.exec('CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash)')
  const q = {
    after: db.prepare('SELECT c.id, c.file, c.hash, f.path, c.start, c.end, c.symbol, c.kind, ' +
      "coalesce((SELECT group_concat(s.name, ' ' ORDER BY s.line) FROM symbols s WHERE s.file = c.file AND s.line BETWEEN c.start AND c.end), '') AS names " +
      'FROM chunks c JOIN files f ON f.id = c.file WHERE c.id > ? ORDER BY c.id LIMIT ?'),
    vector: db.prepare('SELECT vector FROM vectors WHERE hash = ? AND model = ? AND dims = ?'),
    put: db.prepare('INSERT OR REPLACE INTO vectors (hash, model, dims, vector) VALUES (?, ?, ?, ?)'),
    chunksOf: db.prepare('SELECT id, file FROM chunks WHERE hash = ?'),
    // Everything: the vectors read in order, each joined to its chunks (the other way round, a lookup of the vector
    // of every chunk, took 53 s instead of 2.5 s for 250,000 vectors of the Linux tree).
    loadAll: db.prepare('SELECT c.id, c.file, v.vector FROM vectors v CROSS JOIN chunks c ON c.hash = v.hash WHERE v.model = ? AND v.dims = ?'),
    // Chunks written since: few, each looking its vector up.
    loadAfter: db.prepare('SELECT c.id, c.file, v.vector FROM chunks c JOIN vectors v ON v.hash = c.hash AND v.model = ? AND v.dims = ? WHERE c.id > ?'),
    ids: db.prepare('SELECT id FROM chunks'),
    files: db.prepare('SELECT id, path FROM files'),
    prune: db.prepare('DELETE FROM vectors WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = vectors.hash)')
  }
  return {
    chunksAfter: (after, limit) => q.after.all(after, limit) as unknown as MissingChunk[],
    vectorOf (model, dims, hash) {
      const row = q.vector.get(hash, model, dims) as { vector: Uint8Array } | undefined
      return row === undefined ? undefined : vectorOf(row.vector)
    },
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
    load (model, dims, after, each) {
      const rows = after === 0 ? q.loadAll.iterate(model, dims) : q.loadAfter.iterate(model, dims, after)
      for (const row of rows as Iterable<{ id: number, file: number, vector: Uint8Array }>) each(row.id, row.file, vectorOf(row.vector))
    },
    chunkIds () {
      const ids = new Set<number>()
      for (const row of q.ids.iterate() as Iterable<{ id: number }>) ids.add(row.id)
      return ids
    },
    files: () => new Map((q.files.all() as Array<{ id: number, path: string }>).map(row => [row.id, row.path])),
    prune: () => Number(q.prune.run().changes),
    close: () => db.close()
  }
}
