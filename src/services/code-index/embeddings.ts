import { setTimeout as sleep } from 'node:timers/promises'
import { APP_ERR_CONFIG_INVALID, toolError, type ToolError } from '../../base/errors.js'
import { configLabel, type Config } from '../../base/config.js'

/** The API shapes spoken: OpenAI's `/v1/embeddings` (Ollama's /v1, LM Studio, llama.cpp, vLLM) and Ollama's `/api/embed`. */
export type EmbeddingsApi = 'openai' | 'ollama'

/** Where and how embeddings are asked for. */
export interface EmbeddingsSettings {
  /** The endpoint itself (a base URL such as `…/v1` has `/embeddings` added). */
  url: URL
  api: EmbeddingsApi
  model: string
  /** Asked of the model (`dimensions`) and required of every answer; undefined: the model's own. */
  dimensions?: number
  apiKey?: string
  /** Most texts per request. */
  batchSize: number
  /** Longest wait for one answer. */
  timeoutMs: number
  /** Retries of a failed request (connection refused, timeout, 429, 5xx), with exponential backoff. */
  retries: number
  /** First backoff (doubles each retry; a Retry-After up to 30 s wins). */
  retryDelayMs: number
}

/** Where the API key comes from: the environment only, never a flag (a flag shows in every process listing). */
export const API_KEY_ENV = 'WORKSPACE_MCP_EMBEDDINGS_API_KEY'

/** A provider answer larger than this is refused: a batch of 512 texts at 3,072 dimensions is ~30 MB of JSON. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024
/** Longest Retry-After honoured. */
const MAX_RETRY_AFTER_MS = 30_000
/** HTTP statuses worth a retry: the provider is busy or briefly down. */
const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504])

/**
 * The embedding settings of a config (undefined when no URL is set: search_semantic is then not offered).
 * Throws APP_ERR_CONFIG_INVALID for a URL without a model, or one that is not http(s).
 */
export function embeddingsSettings (config: Pick<Config, 'embeddingsUrl' | 'embeddingsModel' | 'embeddingsDimensions' | 'embeddingsBatchSize' | 'embeddingsTimeoutMs'>, env: NodeJS.ProcessEnv = process.env): EmbeddingsSettings | undefined {
  if (config.embeddingsUrl === '') return undefined
  let url: URL
  try {
    url = new URL(config.embeddingsUrl)
  } catch {
    throw new APP_ERR_CONFIG_INVALID(`${configLabel('embeddingsUrl')}: not a URL, received ${JSON.stringify(config.embeddingsUrl)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new APP_ERR_CONFIG_INVALID(`${configLabel('embeddingsUrl')}: must be http:// or https://, received ${JSON.stringify(url.protocol)}`)
  if (url.username !== '' || url.password !== '') throw new APP_ERR_CONFIG_INVALID(`${configLabel('embeddingsUrl')}: must not hold credentials; put the API key in ${API_KEY_ENV}`)
  if (config.embeddingsModel === '') throw new APP_ERR_CONFIG_INVALID(`${configLabel('embeddingsModel')}: required with --embeddings-url (e.g. text-embedding-3-small, nomic-embed-text)`)
  const path = url.pathname.replace(/\/+$/, '')
  const api: EmbeddingsApi = path.endsWith('/api/embed') ? 'ollama' : 'openai'
  if (api === 'openai' && !path.endsWith('/embeddings')) url.pathname = `${path === '' ? '/v1' : path}/embeddings`
  const apiKey = env[API_KEY_ENV]
  return {
    url,
    api,
    model: config.embeddingsModel,
    ...(config.embeddingsDimensions > 0 ? { dimensions: config.embeddingsDimensions } : {}),
    ...(apiKey !== undefined && apiKey !== '' ? { apiKey } : {}),
    batchSize: config.embeddingsBatchSize,
    timeoutMs: config.embeddingsTimeoutMs,
    retries: 3,
    retryDelayMs: 1000
  }
}

/** True when the provider is this machine: code is then never sent over the network. */
export function isLocalProvider (url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) || url.hostname.startsWith('127.')
}

/** How one call of `embed` may differ from the settings: a query or a probe tries once, briefly. */
export interface EmbedOptions {
  /** Retries of a failed request (default: the settings'). */
  retries?: number
  /** Longest wait for the answer (default: the settings'). */
  timeoutMs?: number
}

/** Asks an embedding model for vectors. */
export interface EmbeddingProvider {
  readonly settings: EmbeddingsSettings
  /** One unit-length vector per text (at most batchSize texts), in order; rejects with an EMBEDDINGS_FAILED tool error. */
  embed(texts: readonly string[], signal: AbortSignal, options?: EmbedOptions): Promise<Float32Array[]>
}

/**
 * A provider failure: the tool error, with the HTTP status and the provider's own words when it answered one,
 * and the reason in one line (no provider URL, no hint) for status lines and notes.
 */
export type EmbeddingsError = ToolError & { status?: number, detail?: string, reason: string }

/** Statuses of a refusal: the request or one of its texts, never the provider's health. */
const REFUSALS = new Set([400, 413, 422])
/** Request-level parameters this client sends: a refusal that names one is about the request, not a text. */
const REQUEST_PARAMETER = /\b(dimensions|encoding_format|truncate)\b/i

/** True when the provider refused the request (400, 413, 422): it answers, but not to this. */
export function isRefusal (err: unknown): err is EmbeddingsError {
  return REFUSALS.has(Number((err as { status?: number }).status))
}

/** True when a refusal names a parameter of the request (e.g. `dimensions`): every request would get it. */
export function refusesParameter (err: EmbeddingsError): boolean {
  // A refusal is an HTTP answer: it always carries the provider's words.
  return REQUEST_PARAMETER.test(err.detail as string)
}

/** The refusal restated as one of the request itself (not of a text), so it stops the embedding with that reason. */
export function requestRefused (settings: EmbeddingsSettings, err: EmbeddingsError): EmbeddingsError {
  const answered = `HTTP ${err.status as number}: ${err.detail as string}`
  return providerError(settings, `refused the request itself, not one text (${answered})`, `the provider refused the request: ${answered}`, err.status)
}

/** An EMBEDDINGS_FAILED error about the provider (named with its model), with its one-line reason and the error behind it. */
function providerError (settings: EmbeddingsSettings, why: string, reason: string, status?: number, detail?: string, cause?: unknown): EmbeddingsError {
  const error = toolError('EMBEDDINGS_FAILED', `the embeddings provider ${settings.url.origin}${settings.url.pathname} (model ${settings.model}) ${why}`, { step: 'rank-by-words' }, cause) as EmbeddingsError
  error.reason = reason
  if (status !== undefined) error.status = status
  if (detail !== undefined) error.detail = detail
  return error
}

/** What a failed request tells the caller: the error, and whether trying again may help. */
interface Failure { error: EmbeddingsError, retry: boolean, afterMs?: number }

/** A client of the configured provider: bounded answers, retries with backoff, vectors checked and normalised. */
export function createEmbeddingProvider (settings: EmbeddingsSettings): EmbeddingProvider {
  // A provider may echo what it was sent; the key never leaves in an error.
  const redact = (text: string): string => settings.apiKey === undefined ? text : text.split(settings.apiKey).join('***')
  // `cause`: the network or stream error behind a failure (its code and stack, for the log line), never the provider's
  // own words, which may echo what it was sent.
  const fail = (why: string, retry: boolean, answered?: { status: number, message: string, afterMs?: number }, cause?: unknown): Failure => {
    const error = providerError(settings, redact(why), `the provider ${redact(why)}`, answered?.status, answered === undefined ? undefined : redact(answered.message), cause)
    return { error, retry, ...(answered?.afterMs !== undefined ? { afterMs: answered.afterMs } : {}) }
  }

  async function once (texts: readonly string[], signal: AbortSignal, timeoutMs: number): Promise<Float32Array[] | Failure> {
    const body = settings.api === 'ollama'
      ? { model: settings.model, input: texts, truncate: true, ...(settings.dimensions !== undefined ? { dimensions: settings.dimensions } : {}) }
      : { model: settings.model, input: texts, encoding_format: 'float', ...(settings.dimensions !== undefined ? { dimensions: settings.dimensions } : {}) }
    const timeout = AbortSignal.timeout(timeoutMs)
    let response: Response
    try {
      response = await fetch(settings.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(settings.apiKey !== undefined ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
        body: JSON.stringify(body),
        // A redirect could carry the key and the code elsewhere: the configured URL is the only one spoken to.
        redirect: 'error',
        signal: AbortSignal.any([signal, timeout])
      })
    } catch (err) {
      signal.throwIfAborted()
      if (timeout.aborted) return fail(`did not answer within ${timeoutMs} ms`, true)
      const cause = (err as { cause?: { code?: string, message?: string } }).cause
      return fail(`could not be reached (${cause?.code ?? cause?.message ?? (err as Error).message})`, true, undefined, err)
    }
    let text: string
    try {
      text = await boundedText(response)
    } catch (err) {
      signal.throwIfAborted()
      return fail(timeout.aborted ? `did not finish its answer within ${timeoutMs} ms` : (err as Error).message, timeout.aborted, undefined, err)
    }
    if (!response.ok) {
      const retryAfter = Number(response.headers.get('retry-after'))
      const afterMs = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS) : undefined
      const message = providerMessage(text)
      return fail(`answered HTTP ${response.status}: ${message}`, RETRYABLE.has(response.status), { status: response.status, message, ...(afterMs !== undefined ? { afterMs } : {}) })
    }
    try {
      return vectorsOf(JSON.parse(text) as unknown, settings.api, texts.length, settings.dimensions)
    } catch (err) {
      return fail(`sent an answer that is not embeddings: ${(err as Error).message}`, false)
    }
  }

  return {
    settings,
    async embed (texts, signal, options = {}) {
      const { retries = settings.retries, timeoutMs = settings.timeoutMs } = options
      let delay = settings.retryDelayMs
      for (let attempt = 0; ; attempt++) {
        const result = await once(texts, signal, timeoutMs)
        if (!('error' in result)) return result
        if (!result.retry || attempt >= retries) throw result.error
        // The wait ends early with the caller's signal, which then rejects with the signal's own reason.
        await sleep(result.afterMs ?? delay, undefined, { signal }).catch(() => signal.throwIfAborted())
        delay *= 2
      }
    }
  }
}

/** The answer's body as text, refused past MAX_ANSWER_BYTES (a provider gone wrong must not fill the heap). */
async function boundedText (response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length'))
  if (declared > MAX_ANSWER_BYTES) throw new Error(`sent an answer of ${declared} bytes (more than ${MAX_ANSWER_BYTES})`)
  const parts: Uint8Array[] = []
  let size = 0
  // Fetch always gives a POST's answer a body stream; an empty one yields nothing.
  for await (const part of response.body as ReadableStream<Uint8Array>) {
    size += part.byteLength
    if (size > MAX_ANSWER_BYTES) throw new Error(`sent an answer of more than ${MAX_ANSWER_BYTES} bytes`)
    parts.push(part)
  }
  return Buffer.concat(parts).toString('utf8')
}

/** The provider's own words for an error: OpenAI's `error.message`, Ollama's `error`, else the start of the body. */
function providerMessage (text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: string | { message?: unknown } }
    const message = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message
    if (typeof message === 'string') return oneLine(message)
  } catch {}
  return oneLine(text) || '(no body)'
}

/** A provider's words on one line, cut: they end up in status lines and notes. */
const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim().slice(0, 300)

/** Checks an answer's vectors (count, length, numbers) and makes each unit length, so cosine is a dot product. */
export function vectorsOf (answer: unknown, api: EmbeddingsApi, count: number, dimensions: number | undefined): Float32Array[] {
  const raw = api === 'ollama' ? ollamaVectors(answer) : openAiVectors(answer)
  if (raw.length !== count) throw new Error(`${raw.length} vectors for ${count} texts`)
  const dims = dimensions ?? raw[0]?.length
  return raw.map((vector, i) => {
    if (vector.length === 0 || vector.length !== dims) {
      throw new Error(dimensions !== undefined && vector.length > 0
        ? `vectors of ${vector.length} dimensions where ${dimensions} were asked for (the model ignores \`dimensions\`: leave --embeddings-dimensions unset, or set it to ${vector.length})`
        : `vector ${i} has ${vector.length} dimensions, vector 0 has ${dims}`)
    }
    for (const x of vector) if (!Number.isFinite(x)) throw new Error(`vector ${i} holds ${String(x)}`)
    // hypot scales as it sums: no overflow for huge components, no underflow for tiny ones.
    const norm = Math.hypot(...vector)
    const unit = norm > 0 ? Float32Array.from(vector, x => x / norm) : Float32Array.from(vector)
    return unit
  })
}

function ollamaVectors (answer: unknown): Array<ArrayLike<number> & Iterable<number>> {
  const embeddings = (answer as { embeddings?: unknown } | null)?.embeddings
  if (!Array.isArray(embeddings) || !embeddings.every(Array.isArray)) throw new Error('no "embeddings" array of arrays')
  return embeddings as number[][]
}

function openAiVectors (answer: unknown): Array<ArrayLike<number> & Iterable<number>> {
  const data = (answer as { data?: unknown } | null)?.data
  if (!Array.isArray(data)) throw new Error('no "data" array')
  const rows = data as Array<{ index?: unknown, embedding?: unknown }>
  const ordered = rows.every(row => Number.isInteger(row?.index)) ? [...rows].sort((a, b) => (a.index as number) - (b.index as number)) : rows
  return ordered.map((row, i) => {
    const embedding = row?.embedding
    if (Array.isArray(embedding)) return embedding as number[]
    // encoding_format "base64" (some servers answer so regardless): little-endian float32s.
    if (typeof embedding === 'string') {
      const bytes = Buffer.from(embedding, 'base64')
      if (bytes.byteLength % 4 !== 0) throw new Error(`data[${i}].embedding is base64 of ${bytes.byteLength} bytes, not float32s`)
      return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
    }
    throw new Error(`data[${i}].embedding is not an array of numbers`)
  })
}
