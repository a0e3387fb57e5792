import type { Logger } from '../../base/logger.js'
import { toolError } from '../../base/errors.js'
import type { WorkspaceService } from '../workspace/index.js'
import { chunkHash, chunkText, embeddedChunk, embeddedText } from './chunk-text.js'
import type { CodeIndex } from './code-index.js'
import { isRefusal, refusesParameter, requestRefused, type EmbeddingProvider, type EmbedOptions } from './embeddings.js'
import { hybridSearch, type HybridRanking, type VectorSide } from './hybrid.js'
import type { PathScope } from './index-schema.js'
import { indexedText } from './indexed-lines.js'
import { createProviderHealth, type Outage, type RecoveryTimers } from './provider-health.js'
import { createQueryVectors } from './query-vectors.js'
import { startThread, threadModule, type Thread } from '../threads/index.js'
import type { NearestSet } from './vector-matrix.js'
import type { MissingChunk } from './vector-store.js'
import type { VectorAnswer, VectorRequest } from './vector-worker.js'

/** Where the vectors stand. */
export interface SemanticStatus {
  /**
   * `waiting` for the code index's first scan; `embedding` chunks that have no vector; `ready` when every chunk
   * (up to the cap) has one; `failed` while the provider fails or refuses (the server asks it again with backoff,
   * and embedding resumes when it answers).
   */
  state: 'waiting' | 'embedding' | 'ready' | 'failed'
  model: string
  /** Vector length: configured, else learnt from the model's first answer. */
  dims?: number
  /** Chunks that have a vector. */
  vectors: number
  /** Chunks this process has sent to the provider. */
  embedded: number
  /** True when embeddingsMaxChunks stopped the embedding. */
  capped: boolean
  /** Why, while `failed`: one line, no hint. */
  error?: string
  /** When the server asks the provider again, while `failed` (ms since the epoch). */
  retryAt?: number
}

/** A fused ranking; by words alone when the query could not be given a vector. */
export interface SemanticRanking extends HybridRanking {
  /** Why the query has no vector (one line), and when the server asks the provider again. */
  wordsOnly?: { reason: string, retryAt: number }
}

/** Natural-language search over the code index's chunks: vectors from the configured provider, searched exactly. */
export interface SemanticSearch {
  status(): SemanticStatus
  /**
   * The query's vector, kept for the next pages; one try of at most 2 s (the call's signal bounds it too). Rejects
   * with an EMBEDDINGS_FAILED tool error, at once while a failure of the provider is known.
   */
  embedQuery(text: string, signal: AbortSignal): Promise<Float32Array>
  /** The `k` chunks nearest the vector, in `scope`. */
  nearest(vector: Float32Array, scope: PathScope, k: number): Promise<NearestSet>
  /**
   * Chunks by meaning and by the query's words (`terms`), `depth` deep each, fused (see hybrid.ts); by words
   * alone, saying why, when the query cannot have a vector.
   */
  search(query: { text: string, terms: readonly string[] }, scope: PathScope, depth: number, signal: AbortSignal): Promise<SemanticRanking>
  close(): Promise<void>
}

/** What createSemanticSearch needs. */
export interface SemanticOptions {
  index: CodeIndex
  /** The whole workspace (never a session's narrowed one): chunk texts are read through its jail. */
  workspace: WorkspaceService
  provider: EmbeddingProvider
  log: Logger
  /** Most chunks given a vector. */
  maxChunks: number
  /**
   * Clock and timers of the recovery (default: the process's): after a failure the provider is probed a minute
   * later, doubling while it fails, to 30 min; a failure seen in the last 30 s spares calls a try of their own.
   */
  timers?: RecoveryTimers
  /** The vector thread's module (default: vector-worker.js beside this module). */
  workerUrl?: URL
}

/**
 * Chunks the vector thread examines per request for missing vectors: a round of a few thousand keeps each
 * request short (searches queue behind it) while a file's chunks are mostly read in one round.
 */
const EXAMINE = 4096
/** Longest wait for a query's vector: a call ranks by words rather than wait on a provider in trouble. */
const QUERY_TIMEOUT_MS = 2000
/** Query vectors kept for the next pages of their result sets. */
const QUERY_VECTORS = 64
/** What a probe embeds: one word, which no provider refuses as too long. */
const PROBE_TEXT = 'dimensions'
/** The ranking side of a query without a vector: nothing is near. */
const NOTHING_NEAR: NearestSet = { hits: [], mean: 0, sd: 0 }
const WORDS_ONLY: VectorSide = { embedQuery: async () => new Float32Array(0), nearest: async () => NOTHING_NEAR }

/**
 * Starts nothing until the code index finishes a scan (or a call asks): then a vector thread holds the model's
 * vectors in memory, and chunks without one are embedded in the background, a batch at a time.
 */
export function createSemanticSearch (options: SemanticOptions): SemanticSearch {
  const { index, workspace, provider, log, maxChunks } = options
  const { model, batchSize } = provider.settings
  let dims = provider.settings.dimensions
  /** Where the run stands; `failed` is the health's to say. */
  const status: SemanticStatus = { state: 'waiting', model, ...(dims !== undefined ? { dims } : {}), vectors: 0, embedded: 0, capped: false }
  const stop = new AbortController()
  let thread: Promise<Thread> | undefined
  let running: Promise<void> | undefined
  let reloadWanted = false
  /** The provider has answered a request of this shape (model, dimensions): a refusal since is about its texts. */
  let shapeAccepted = false
  const queries = createQueryVectors(QUERY_VECTORS)
  const health = createProviderHealth({
    probe: async (signal) => { await probe(signal, { retries: 0 }) },
    onRecovered: () => kick(),
    log,
    ...(options.timers !== undefined ? { timers: options.timers } : {})
  })
  /**
   * The last chunk examined for a missing vector. A chunk whose text changed comes back under a new id after its
   * file's rescan; one the provider refused waits for a restart.
   */
  let cursor = 0

  /** The model's vector length, fixed by its first answer when not configured. */
  function learn (vector: Float32Array): void {
    if (dims === undefined) status.dims = dims = vector.length
    if (vector.length !== dims) throw toolError('EMBEDDINGS_FAILED', `the model ${model} answered a vector of ${vector.length} dimensions where it gave ${dims} before`, 'restart the server after changing the model')
  }

  function vectorThread (file: string, length: number): Promise<Thread> {
    thread ??= (async () => {
      const started = startThread(options.workerUrl ?? threadModule('vector-worker', import.meta.url), { name: 'vector-worker', data: { vectorFile: file } })
      status.vectors = (await started.request<VectorAnswer>({ configure: { model, dims: length } } satisfies VectorRequest)).vectors
      return started
    })()
    return thread
  }

  /** The provider answered: the request's shape is fine, and an outage is over. */
  function answered (): void {
    shapeAccepted = true
    health.answered()
  }

  /** One word embedded: the vector length learnt or checked; a refusal of it is a refusal of the request. */
  async function probe (signal: AbortSignal, options?: EmbedOptions): Promise<void> {
    let vector: Float32Array
    try {
      [vector] = await provider.embed([PROBE_TEXT], signal, options)
    } catch (err) {
      throw isRefusal(err) ? requestRefused(provider.settings, err) : err
    }
    learn(vector)
    answered()
  }

  async function ask (request: VectorRequest): Promise<VectorAnswer> {
    const answer = await (await vectorThread(index.file() as string, dims as number)).request<VectorAnswer>(request)
    status.vectors = answer.vectors
    return answer
  }

  /**
   * The text of each distinct hash among these chunks (in id order, so grouped by file), read now through the
   * jail: a copy whose file changed since it was indexed is passed by, and another copy of that text serves.
   */
  async function textsOf (rows: MissingChunk[], signal: AbortSignal): Promise<Array<{ hash: string, text: string }>> {
    const texts = new Map<string, string>()
    for (let i = 0; i < rows.length;) {
      const path = rows[i].path
      const lines = rows.slice(i).some(row => row.path === path && !texts.has(row.hash)) ? (await indexedText(workspace, path, signal))?.split('\n') : undefined
      // Read, so inside a served root: the file as the workspace shows it heads each of its chunks' texts.
      const shown = lines === undefined ? '' : workspace.lexical(path).relative
      for (; i < rows.length && rows[i].path === path; i++) {
        if (lines === undefined || texts.has(rows[i].hash)) continue
        const chunk = chunkText(lines, rows[i].start, rows[i].end)
        // Changed since it was indexed: the next scan indexes it again, with its new hash.
        if (chunkHash(chunk) === rows[i].hash) texts.set(rows[i].hash, embeddedChunk(chunk, { path: shown, symbol: rows[i].symbol, kind: rows[i].kind, names: rows[i].names }))
      }
    }
    return [...texts].map(([hash, text]) => ({ hash, text }))
  }

  /**
   * Embeds a batch. A batch the provider refuses (400, 413, 422) is split to find the texts it refuses, unless the
   * refusal is the request's: it names a parameter of it, or, before any request of this shape was answered, a
   * one-word request is refused too. That stops the run with the reason.
   */
  async function embedBatch (batch: Array<{ hash: string, text: string }>, signal: AbortSignal): Promise<void> {
    let vectors: Float32Array[]
    try {
      vectors = await provider.embed(batch.map(b => b.text), signal)
    } catch (err) {
      // An abort is not a refusal: it carries no status.
      if (!isRefusal(err)) throw err
      if (refusesParameter(err)) throw requestRefused(provider.settings, err)
      if (!shapeAccepted) await probe(signal, { retries: 0 })
      if (batch.length === 1) {
        log.debug({ err, hash: batch[0].hash }, 'the embeddings provider refused a chunk; it stays without a vector')
        return
      }
      const half = Math.ceil(batch.length / 2)
      await embedBatch(batch.slice(0, half), signal)
      await embedBatch(batch.slice(half), signal)
      return
    }
    vectors.forEach(learn)
    answered()
    await ask({ put: batch.map((b, i) => ({ hash: b.hash, vector: vectors[i] })) })
    status.embedded += batch.length
  }

  async function embedAll (signal: AbortSignal): Promise<void> {
    status.state = 'embedding'
    status.capped = false
    // The vector length is needed before any vector is stored: a model whose length is not configured tells it.
    if (dims === undefined) await probe(signal)
    for (;;) {
      signal.throwIfAborted()
      if (reloadWanted) {
        // A scan rewrote chunks: the vectors in memory follow (chunks gone dropped, new ones with a known text added).
        reloadWanted = false
        const { pruned, removed } = await ask({ refresh: true })
        log.debug({ pruned, removed }, 'vectors brought up to date after a scan')
      }
      if (status.vectors >= maxChunks) {
        status.capped = true
        return
      }
      // The cursor outlives the run: chunk ids only grow, so the next run looks only at chunks written since.
      const { rows, last } = await ask({ missing: { after: cursor, examine: EXAMINE } })
      if (last === undefined) return
      // Copies of one text (the same code in several places) are embedded once.
      const texts = await textsOf(rows as MissingChunk[], signal)
      for (let i = 0; i < texts.length && status.vectors < maxChunks; i += batchSize) await embedBatch(texts.slice(i, i + batchSize), signal)
      // Only a round that got through moves the cursor: a run that failed starts again where it stood.
      cursor = last
    }
  }

  /** Starts an embedding run unless one is running, the index is not open, or the provider is failing (its probe resumes it). */
  function kick (): void {
    if (running !== undefined || stop.signal.aborted || index.file() === undefined || health.outage() !== undefined) return
    const before = status.embedded
    running = embedAll(stop.signal).then(() => {
      status.state = 'ready'
      if (status.embedded > before) log.info({ model, vectors: status.vectors, embedded: status.embedded - before, capped: status.capped }, 'embeddings up to date')
    }, (err: unknown) => {
      if (stop.signal.aborted) return
      health.failed(err)
      log.warn({ err }, 'embedding stopped; the provider is asked again later')
    }).finally(() => {
      running = undefined
      // A scan that ended while the run asked for its last chunks: its chunks get their run now.
      /* c8 ignore next */
      if (reloadWanted) kick()
    })
  }

  index.onScanned((changed) => {
    if (changed > 0 && thread !== undefined) reloadWanted = true
    // A scan that changed nothing leaves nothing to embed once a run has finished.
    if (changed > 0 || status.state !== 'ready') kick()
  })

  /**
   * The query's vector, or the outage that keeps it from one: a known one at once, else after one short try. A
   * call that finds the provider answering ends an outage, and the embedding resumes now.
   */
  async function queryVector (text: string, signal: AbortSignal): Promise<Float32Array | Outage> {
    const kept = queries.get(model, dims, text)
    if (kept !== undefined) return kept
    const known = health.known()
    if (known !== undefined) return known
    let vector: Float32Array
    try {
      [vector] = await provider.embed([embeddedText(text)], signal, { retries: 0, timeoutMs: Math.min(provider.settings.timeoutMs, QUERY_TIMEOUT_MS) })
      learn(vector)
    } catch (err) {
      signal.throwIfAborted()
      health.failed(err)
      return health.outage() as Outage
    }
    answered()
    queries.set(model, dims as number, text, vector)
    return vector
  }

  const service: SemanticSearch = {
    status () {
      const outage = health.outage()
      return outage === undefined ? { ...status } : { ...status, state: 'failed', error: outage.reason, retryAt: outage.retryAt }
    },
    async embedQuery (text, signal) {
      const found = await queryVector(text, signal)
      if (found instanceof Float32Array) return found
      throw toolError('EMBEDDINGS_FAILED', `vectors are unavailable: ${found.reason}`, { step: 'rank-by-words' })
    },
    async nearest (vector, scope, k) {
      if (index.file() === undefined) return NOTHING_NEAR
      return (await ask({ search: { vector, k, ...(scope !== undefined ? { scope } : {}) } })).near as NearestSet
    },
    async search (query, scope, depth, signal) {
      const found = await queryVector(query.text, signal)
      if (found instanceof Float32Array) return await hybridSearch({ embedQuery: async () => found, nearest: service.nearest }, index, query, scope, depth, signal)
      const ranking = await hybridSearch(WORDS_ONLY, index, query, scope, depth, signal)
      return { ...ranking, wordsOnly: { reason: found.reason, retryAt: found.retryAt } }
    },
    async close () {
      health.close()
      stop.abort()
      await running
      const closing = await thread?.catch(() => undefined)
      // SQLite's objects are let go while the thread can still run JavaScript (index-worker's closeAll says why).
      await closing?.request({ close: true }).catch(() => undefined)
      await closing?.terminate()
    }
  }
  return service
}
