// A deterministic embeddings provider on 127.0.0.1, for tests and for the benchmarks that measure this server's
// own work (the real model's speed is measured apart, in the retrieval section). It speaks OpenAI's
// `POST …/embeddings` ({ data: [{ index, embedding }] }) and Ollama's `POST /api/embed` ({ embeddings }).
import { createServer } from 'node:http'

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

/**
 * Feature hashing of tokens (each adds ±1 at a hashed place), unit length: deterministic, and texts sharing
 * tokens are close. A word-hashing stand-in, not a model: it knows nothing of meaning.
 */
export function hashedEmbedding (tokens, dims) {
  const vector = new Array(dims).fill(0)
  for (const token of tokens) {
    let h = FNV_OFFSET
    for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), FNV_PRIME) >>> 0
    vector[h % dims] += (h & 0x80000000) === 0 ? 1 : -1
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0))
  return norm === 0 ? vector : vector.map(x => x / norm)
}

const words = (text) => text.toLowerCase().split(/[^a-z0-9_]+/).filter(word => word.length > 1)

async function bodyOf (req) {
  const parts = []
  for await (const part of req) parts.push(part)
  return Buffer.concat(parts).toString('utf8')
}

/** Starts the fake; `options` may be changed between requests. */
export async function startFakeEmbeddings (options = {}, embed = (text, dims) => hashedEmbedding(words(text), dims)) {
  const requests = []
  const server = createServer((req, res) => {
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
    }
    bodyOf(req).then(async (text) => {
      const path = new URL(req.url, 'http://x').pathname
      const ollama = path === '/api/embed'
      if (req.method !== 'POST' || (!ollama && !path.endsWith('/embeddings'))) return send(404, { error: `no route ${req.method} ${path}` })
      const body = JSON.parse(text)
      const inputs = typeof body.input === 'string' ? [body.input] : body.input
      requests.push({ path, ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}), model: body.model, inputs, ...(body.dimensions !== undefined ? { dimensions: body.dimensions } : {}) })
      if (options.delayMs !== undefined) await new Promise(resolve => setTimeout(resolve, options.delayMs))
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return send(401, ollama ? { error: 'unauthorized' } : { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } })
      }
      if (options.failWith !== undefined) return send(options.failWith, { error: { message: `down (${options.failWith})` } })
      if (options.refuseDimensions !== undefined && body.dimensions !== undefined) return send(400, { error: { message: options.refuseDimensions, type: 'invalid_request_error' } })
      const fault = options.faults?.shift()
      if (fault !== undefined) return send(fault, { error: { message: `fault ${fault}` } }, options.retryAfter !== undefined ? { 'retry-after': String(options.retryAfter) } : {})
      if (options.refuse !== undefined && inputs.some(input => input.includes(options.refuse))) return send(400, { error: { message: 'input too long' } })
      const dims = options.ignoreDimensions !== true && body.dimensions !== undefined ? body.dimensions : options.dims ?? 64
      const vectors = inputs.map(input => embed(input, dims))
      if (ollama) return send(200, { model: body.model, embeddings: vectors })
      send(200, {
        object: 'list',
        model: body.model,
        // Listed last to first: a client must order by index.
        data: vectors.map((vector, index) => ({
          object: 'embedding',
          index,
          embedding: options.base64 === true ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector
        })).reverse()
      })
    }).catch((err) => send(500, { error: err.message }))
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}`,
    options,
    requests,
    // A request the client gave up on may still be answered later: its connection is not left to hold close() open.
    close: async () => { await new Promise(resolve => { server.close(() => resolve()); server.closeAllConnections() }) }
  }
}
