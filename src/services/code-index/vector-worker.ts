import { parentPort, workerData } from 'node:worker_threads'
import { loadSqlite } from './index-store.js'
import { createVectorMatrix, type Nearest, type VectorMatrix } from './vector-matrix.js'
import { openVectorStore, type MissingChunk, type VectorStore } from './vector-store.js'

/** A request to the vector thread. */
export type VectorRequest =
  | { configure: { model: string, dims: number } }
  | { reload: true }
  | { missing: { after: number, limit: number } }
  | { put: Array<{ hash: string, vector: Float32Array }> }
  | { search: { vector: Float32Array, k: number, scope?: string } }

/** Its answer: the vectors held after it, and the request's own result. */
export interface VectorAnswer {
  vectors: number
  pruned?: number
  rows?: MissingChunk[]
  hits?: Nearest[]
}

/**
 * What the thread does with each request: one model's vectors in memory (loaded on configure, reloaded after a
 * scan changed chunks), the chunks still without one, new vectors stored and added, exact nearest chunks.
 */
export function vectorHandler (store: VectorStore): (request: VectorRequest) => VectorAnswer {
  let model = ''
  let matrix: VectorMatrix | undefined
  let files = new Map<number, string>()
  const add = (chunk: number, file: number, vector: Float32Array): void => { matrix?.add(chunk, file, vector) }
  const load = (): void => {
    const m = matrix as VectorMatrix
    m.clear()
    store.load(model, m.dims, add)
    files = store.files()
  }
  const configured = (): VectorMatrix => {
    if (matrix === undefined) throw new Error('the vector thread was not configured')
    return matrix
  }
  return (request) => {
    if ('configure' in request) {
      model = request.configure.model
      matrix = createVectorMatrix(request.configure.dims)
      load()
      return { vectors: matrix.size }
    }
    const m = configured()
    if ('reload' in request) {
      const pruned = store.prune()
      load()
      return { vectors: m.size, pruned }
    }
    if ('missing' in request) return { vectors: m.size, rows: store.missing(model, m.dims, request.missing.after, request.missing.limit) }
    if ('put' in request) {
      store.put(model, m.dims, request.put, (chunk, file, vector) => {
        // A chunk of a file written since the last load: its path is looked up once.
        if (!files.has(file)) files = store.files()
        add(chunk, file, vector)
      })
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
    return { vectors: m.size, hits: m.nearest(vector, k, allow) }
  }
}

// The thread: SQLite reads and writes of vectors and the exhaustive search happen here, never on the event loop
// that serves requests.
/* c8 ignore start */
if (parentPort !== null && (workerData as { vectorFile?: string } | undefined)?.vectorFile !== undefined) {
  const port = parentPort
  const sqlite = loadSqlite()
  const handle = sqlite === null ? null : vectorHandler(openVectorStore(sqlite, (workerData as { vectorFile: string }).vectorFile))
  port.on('message', (request: VectorRequest & { id: number }) => {
    try {
      if (handle === null) throw new Error('@photostructure/sqlite is not installed')
      port.postMessage({ id: request.id, ...handle(request) })
    } catch (err) {
      port.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err) })
    }
  })
}
/* c8 ignore stop */
