/** How the fake answers, changeable between requests. */
export interface FakeEmbeddingsOptions {
  /** Vector length (default 64). `dimensions` in a request overrides it unless `ignoreDimensions`. */
  dims?: number
  ignoreDimensions?: boolean
  /** Answer OpenAI-shaped requests with base64 float32s instead of arrays. */
  base64?: boolean
  /** The key a request must carry as `Authorization: Bearer …` (401 otherwise). */
  apiKey?: string
  /** Statuses the next requests get instead of an answer, in order (e.g. [503, 429]). */
  faults?: number[]
  /** Seconds sent as Retry-After with a fault. */
  retryAfter?: number
  /** Every request gets this status while set (an outage: e.g. 503). */
  failWith?: number
  /** A request that carries `dimensions` gets a 400 with this message (as OpenAI answers for a model that cannot shorten its vectors). */
  refuseDimensions?: string
  /** An input holding this text makes the whole request a 400 (as an over-long input does with real providers). */
  refuse?: string
  /** Milliseconds before answering. */
  delayMs?: number
}

/** A request as the fake saw it. */
export interface SeenRequest {
  path: string
  authorization?: string
  model: string
  inputs: string[]
  dimensions?: number
}

/** A running fake provider. */
export interface FakeEmbeddings {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string
  options: FakeEmbeddingsOptions
  requests: SeenRequest[]
  close(): Promise<void>
}

/** Feature hashing of tokens, unit length: texts sharing tokens are close. */
export function hashedEmbedding (tokens: Iterable<string>, dims: number): number[]
/** Starts the fake on 127.0.0.1 (port 0); `embed` turns a text into its vector (default: hashed words). */
export function startFakeEmbeddings (options?: FakeEmbeddingsOptions, embed?: (text: string, dims: number) => number[]): Promise<FakeEmbeddings>
