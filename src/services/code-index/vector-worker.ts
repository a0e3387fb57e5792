import { serveAs } from '../threads/index.js'
import { finalizeClosedConnections } from './index-reader.js'
import { loadSqlite } from './index-schema.js'
import { createVectorMatrix, type NearestSet, type VectorMatrix } from './vector-matrix.js'
import { openVectorStore, type MissingChunk, type VectorStore } from './vector-store.js'

/** A request to the vector thread. */
export type VectorRequest =
  | { configure: { model: string, dims: number } }
  | { refresh: true }
  | { missing: { after: number, examine: number } }
  | { put: Array<{ hash: string, vector: Float32Array }> }
  | { search: { vector: Float32Array, k: number, scope?: string } }
  | { close: true }

/** Its answer: the vectors held after it, and the request's own result. */
export interface VectorAnswer {
  vectors: number
  /** refresh: vectors of texts no chunk holds any more, deleted; rows of chunks gone, dropped from memory. */
  pruned?: number
  removed?: number
  /** missing: the chunks examined that have no vector, and the last chunk examined (absent: none was left). */
  rows?: MissingChunk[]
  last?: number
  near?: NearestSet
}

/**
 * What the thread does with each request: one model's vectors in memory (loaded on configure, brought up to
 * date after a scan changed chunks: rows of chunks gone dropped, new chunks whose text has a vector added), the
 * chunks without one, new vectors stored and added, exact nearest chunks.
 */
export function vectorHandler (store: VectorStore): (request: Exclude<VectorRequest, { close: true }>) => VectorAnswer {
  let model = ''
  let matrix: VectorMatrix | undefined
  let files = new Map<number, string>()
  const add = (chunk: number, file: number, vector: Float32Array): void => {
    // A chunk of a file written since the paths were read: they are read again, once.
    if (!files.has(file)) files = store.files()
    matrix?.add(chunk, file, vector)
  }
  const configured = (): VectorMatrix => {
    if (matrix === undefined) throw new Error('the vector thread was not configured')
    return matrix
  }
  return (request) => {
    if ('configure' in request) {
      model = request.configure.model
      matrix = createVectorMatrix(request.configure.dims)
      files = store.files()
      store.load(model, matrix.dims, 0, add)
      return { vectors: matrix.size }
    }
    const m = configured()
    if ('refresh' in request) {
      const pruned = store.prune()
      const alive = store.chunkIds()
      const removed = m.retain(chunk => alive.has(chunk))
      files = store.files()
      // Chunk ids only grow: every chunk written since the last load is above the highest one held.
      store.load(model, m.dims, m.maxChunk, add)
      return { vectors: m.size, pruned, removed }
    }
    if ('missing' in request) {
      const examined = store.chunksAfter(request.missing.after, request.missing.examine)
      const rows: MissingChunk[] = []
      for (const row of examined) {
        if (m.has(row.id)) continue
        // Its text got a vector after the last load (a copy of code embedded since): it joins, nothing to embed.
        const known = store.vectorOf(model, m.dims, row.hash)
        if (known === undefined) rows.push(row)
        else add(row.id, row.file, known)
      }
      return { vectors: m.size, rows, ...(examined.length > 0 ? { last: examined[examined.length - 1].id } : {}) }
    }
    if ('put' in request) {
      store.put(model, m.dims, request.put, add)
      return { vectors: m.size }
    }
    const { vector, k, scope } = request.search
    const allow = scope === undefined
      ? undefined
      : (() => {
          const inside = new Set<number>()
          for (const [id, path] of files) if (path === scope || path.startsWith(`${scope}/`)) inside.add(id)
          return (file: number): boolean => inside.has(file)
        })()
    return { vectors: m.size, near: m.nearest(vector, k, allow) }
  }
}

/**
 * The vector thread's handler: SQLite reads and writes of vectors and the exhaustive search happen there, never
 * on the event loop that serves requests.
 */
export function vectorThreadHandler (data: { vectorFile: string }, _notify: unknown, sqlite = loadSqlite()): (request: VectorRequest) => VectorAnswer | Promise<VectorAnswer> {
  if (sqlite === null) return () => { throw new Error('@photostructure/sqlite is not installed') }
  const store = openVectorStore(sqlite, data.vectorFile)
  const handle = vectorHandler(store)
  return (request) => 'close' in request ? closeStore(store) : handle(request)
}

/** Closes the store and has SQLite's objects finalized while the thread can run JavaScript (see index-worker's closeAll). */
async function closeStore (store: VectorStore): Promise<VectorAnswer> {
  store.close()
  await finalizeClosedConnections()
  return { vectors: 0 }
}

serveAs('vector-worker', vectorThreadHandler)
