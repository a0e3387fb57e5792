import { createServer, type Server, type ServerResponse } from 'node:http'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/base/config.js'
import { isToolError } from '../../../src/base/errors.js'
import { createEmbeddingProvider, embeddingsSettings, isLocalProvider, isRefusal, refusesParameter, requestRefused, vectorsOf, type EmbeddingsError, type EmbeddingsSettings } from '../../../src/services/code-index/embeddings.js'
import { fakeEmbedding, startFakeEmbeddings, type FakeEmbeddings } from '../../helpers/fake-embeddings.js'
import { runs } from '../../helpers/property.js'
import { waitUntil } from '../../helpers/wait.js'

const settingsOf = (flags: Record<string, string>, env: NodeJS.ProcessEnv = {}): EmbeddingsSettings | undefined =>
  embeddingsSettings(loadConfig(flags, {}, '/tmp'), env)

t.test('settings: the endpoint from a URL or a base URL, the API shape from its path, the key from the environment only', async (t) => {
  t.equal(settingsOf({}), undefined, 'no URL: no semantic search')
  const openai = settingsOf({ embeddingsUrl: 'https://api.openai.com/v1', embeddingsModel: 'text-embedding-3-small' }, { WORKSPACE_MCP_EMBEDDINGS_API_KEY: 'sk-test' })
  t.match(openai, { api: 'openai', model: 'text-embedding-3-small', apiKey: 'sk-test', batchSize: 64, timeoutMs: 60000, retries: 3 })
  t.equal(openai?.url.href, 'https://api.openai.com/v1/embeddings', 'a base URL ending in /v1 is completed')
  t.equal(openai?.dimensions, undefined, 'the model\'s own length unless asked')
  t.equal(settingsOf({ embeddingsUrl: 'http://127.0.0.1:11434/v1/embeddings/', embeddingsModel: 'm', embeddingsDimensions: '256' })?.url.href, 'http://127.0.0.1:11434/v1/embeddings/')
  t.equal(settingsOf({ embeddingsUrl: 'http://127.0.0.1:11434/v1/embeddings', embeddingsModel: 'm', embeddingsDimensions: '256' })?.dimensions, 256)
  t.equal(settingsOf({ embeddingsUrl: 'http://127.0.0.1:8080', embeddingsModel: 'm' })?.url.href, 'http://127.0.0.1:8080/v1/embeddings', 'a bare server gets /v1/embeddings')
  const ollama = settingsOf({ embeddingsUrl: 'http://localhost:11434/api/embed', embeddingsModel: 'nomic-embed-text' }, { WORKSPACE_MCP_EMBEDDINGS_API_KEY: '' })
  t.match(ollama, { api: 'ollama', model: 'nomic-embed-text' })
  t.equal(ollama?.apiKey, undefined, 'an empty key is no key')
  t.throws(() => settingsOf({ embeddingsUrl: 'http://127.0.0.1:11434/api/embed' }), /--embeddings-model \/ WORKSPACE_MCP_EMBEDDINGS_MODEL: required with --embeddings-url/)
  t.throws(() => settingsOf({ embeddingsUrl: 'not a url', embeddingsModel: 'm' }), /--embeddings-url \/ WORKSPACE_MCP_EMBEDDINGS_URL: not a URL/)
  t.throws(() => settingsOf({ embeddingsUrl: 'file:///etc/passwd', embeddingsModel: 'm' }), /must be http:\/\/ or https:\/\/, received "file:"/)
  t.throws(() => settingsOf({ embeddingsUrl: 'https://user:secret@example.com/v1', embeddingsModel: 'm' }), /must not hold credentials; put the API key in WORKSPACE_MCP_EMBEDDINGS_API_KEY/)
  t.doesNotThrow(() => loadConfig({ embeddingsApiKey: 'x' }, {}, '/tmp'), 'a key alone is a valid setting')
  t.throws(() => loadConfig({}, { WORKSPACE_MCP_EMBEDDINGS_DIMENSIONS: '9000' }, '/tmp'), /--embeddings-dimensions/)
  t.same(['http://localhost:1', 'http://127.0.0.1:1', 'http://127.8.0.1', 'http://[::1]:1', 'https://api.openai.com', 'http://10.0.0.1'].map(u => isLocalProvider(new URL(u))), [true, true, true, true, false, false])
})

const provider = (fake: { url: string }, path: string, extra: Partial<EmbeddingsSettings> = {}): ReturnType<typeof createEmbeddingProvider> => createEmbeddingProvider({
  url: new URL(`${fake.url}${path}`), api: path === '/api/embed' ? 'ollama' : 'openai', model: 'fake-model', batchSize: 8, timeoutMs: 5000, retries: 3, retryDelayMs: 1, ...extra
})
const signal = (): AbortSignal => new AbortController().signal
const near = (a: ArrayLike<number>, b: ArrayLike<number>): boolean => a.length === b.length && Array.from(a).every((x, i) => Math.abs(x - b[i]) < 1e-6)
async function fake (t: Test, options: Parameters<typeof startFakeEmbeddings>[0] = {}): Promise<FakeEmbeddings> {
  const f = await startFakeEmbeddings(options)
  t.teardown(() => f.close())
  return f
}
async function failure (t: Test, promise: Promise<unknown>): Promise<EmbeddingsError> {
  try {
    await promise
  } catch (err) {
    t.ok(isToolError(err), 'a tool error')
    return err as EmbeddingsError
  }
  throw new Error('expected a failure')
}

t.test('both API shapes, float and base64 answers, dimensions asked for and required, the key sent as a bearer token', async (t) => {
  const f = await fake(t, { dims: 32, apiKey: 'sk-1' })
  const texts = ['retry failed upload', 'parse the config file', 'x']
  for (const path of ['/v1/embeddings', '/api/embed']) {
    const vectors = await provider(f, path, { apiKey: 'sk-1' }).embed(texts, signal())
    t.equal(vectors.length, 3)
    vectors.forEach((v, i) => t.ok(near(v, fakeEmbedding(texts[i], 32)), `${path}: vector ${i} in order (the fake lists them last first)`))
  }
  t.match(f.requests[0], { path: '/v1/embeddings', authorization: 'Bearer sk-1', model: 'fake-model', inputs: texts })
  t.match(f.requests[1], { path: '/api/embed', authorization: 'Bearer sk-1' })
  f.options.base64 = true
  t.ok(near((await provider(f, '/v1/embeddings', { apiKey: 'sk-1' }).embed(['retry'], signal()))[0], fakeEmbedding('retry', 32)), 'base64 float32s are read')
  f.options.base64 = false
  const short = await provider(f, '/v1/embeddings', { apiKey: 'sk-1', dimensions: 8 }).embed(['retry upload'], signal())
  t.equal(short[0].length, 8)
  t.equal(f.requests.at(-1)?.dimensions, 8, 'dimensions is asked for')
  t.equal((await provider(f, '/api/embed', { apiKey: 'sk-1', dimensions: 16 }).embed(['a b'], signal()))[0].length, 16, 'Ollama is asked too')
  f.options.ignoreDimensions = true
  const ignored = await failure(t, provider(f, '/v1/embeddings', { apiKey: 'sk-1', dimensions: 8 }).embed(['a'], signal()))
  t.match(ignored.message, /^ERROR EMBEDDINGS_FAILED: the embeddings provider http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings \(model fake-model\) sent an answer that is not embeddings: vectors of 32 dimensions where 8 were asked for \(the model ignores `dimensions`: leave --embeddings-dimensions unset, or set it to 32\)\.$/)
  t.match(ignored, { next: { step: 'rank-by-words' } }, 'the tool layer says what to call instead')
  const denied = await failure(t, provider(f, '/v1/embeddings', { apiKey: 'sk-wrong' }).embed(['a'], signal()))
  t.match(denied.message, /answered HTTP 401: Incorrect API key provided/)
  t.equal(denied.status, 401)
  t.match((await failure(t, provider(f, '/api/embed').embed(['a'], signal()))).message, /answered HTTP 401: unauthorized/, 'Ollama\'s error text')
})

t.test('retries: 429 and 5xx again with backoff (Retry-After honoured), a 400 at once; the key never appears in an error', async (t) => {
  const f = await fake(t)
  f.options.faults = [503, 429, 500]
  t.equal((await provider(f, '/v1/embeddings').embed(['a'], signal())).length, 1, 'three faults, then an answer')
  t.equal(f.requests.length, 4)
  f.options.faults = [503, 503, 503, 503]
  const exhausted = await failure(t, provider(f, '/v1/embeddings').embed(['a'], signal()))
  t.match(exhausted.message, /answered HTTP 503: fault 503/)
  t.equal(f.requests.length, 8, 'one try and three retries')
  f.options.faults = [429]
  f.options.retryAfter = 0.05
  const started = Date.now()
  await provider(f, '/v1/embeddings', { retryDelayMs: 0 }).embed(['a'], signal())
  t.ok(Date.now() - started >= 45, 'Retry-After is waited for')
  f.options.refuse = 'huge'
  const refused = await failure(t, provider(f, '/v1/embeddings').embed(['huge input'], signal()))
  t.equal(refused.status, 400)
  t.equal(f.requests.length, 11, 'a 400 is not retried')
  f.options.faults = [500]
  f.options.retryAfter = undefined
  const secret = 'sk-live-0123456789'
  const echo = await startServer(t, (res) => res.writeHead(500, { 'content-type': 'text/plain', 'retry-after': 'soon' }).end(`bad key ${secret}`))
  const leaked = await failure(t, provider(echo, '/v1/embeddings', { apiKey: secret, retries: 0 }).embed(['a'], signal()))
  t.match(leaked.message, /answered HTTP 500: bad key \*\*\*/)
  t.notMatch(leaked.message, secret)
  t.match(leaked, { reason: 'the provider answered HTTP 500: bad key ***', detail: 'bad key ***' }, 'nor in its reason')
  const aborted = new AbortController()
  f.options.faults = [503, 503, 503]
  const asked = f.requests.length
  const waiting = provider(f, '/v1/embeddings', { retryDelayMs: 60_000 }).embed(['a'], aborted.signal)
  // Cancelled once the first try was refused (the provider saw it): the call is then in its 60 s backoff.
  await waitUntil(() => f.requests.length > asked, 'the first try')
  aborted.abort(new Error('cancelled'))
  await t.rejects(waiting, /cancelled/, 'a backoff ends with the caller\'s signal')
})

t.test('each failure has its reason in one line (no URL, no hint); a call may try once, with a shorter wait; a refusal of a parameter is the request\'s', async (t) => {
  const f = await fake(t, { refuseDimensions: 'This model does not support\n  specifying dimensions.' })
  const refused = await failure(t, provider(f, '/v1/embeddings', { dimensions: 384 }).embed(['a', 'b'], signal()))
  t.match(refused, { status: 400, detail: 'This model does not support specifying dimensions.', reason: 'the provider answered HTTP 400: This model does not support specifying dimensions.' }, 'the provider\'s words on one line')
  t.ok(isRefusal(refused) && refusesParameter(refused), 'a refusal that names `dimensions`')
  const restated = requestRefused(provider(f, '/v1/embeddings').settings, refused)
  t.match(restated, { status: 400, toolCode: 'EMBEDDINGS_FAILED', reason: 'the provider refused the request: HTTP 400: This model does not support specifying dimensions.', next: { step: 'rank-by-words' } })
  t.match(restated.message, /^ERROR EMBEDDINGS_FAILED: the embeddings provider http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings \(model fake-model\) refused the request itself, not one text \(HTTP 400: This model does not support specifying dimensions\.\)\.$/)
  f.options.refuse = 'huge'
  const long = await failure(t, provider(f, '/v1/embeddings').embed(['huge'], signal()))
  t.ok(isRefusal(long) && !refusesParameter(long), 'a text refused: not the request\'s')
  t.notOk(isRefusal(new Error('aborted')), 'an error without a status is no refusal')
  f.options.faults = [503, 503]
  const once = await failure(t, provider(f, '/v1/embeddings').embed(['a'], signal(), { retries: 0 }))
  t.match(once, { status: 503, reason: 'the provider answered HTTP 503: fault 503' })
  t.notOk(isRefusal(once), 'a 503 is no refusal')
  t.equal(f.options.faults.length, 1, 'tried once')
  f.options.faults = []
  f.options.delayMs = 300
  t.match(await failure(t, provider(f, '/v1/embeddings').embed(['a'], signal(), { retries: 0, timeoutMs: 50 })), { reason: 'the provider did not answer within 50 ms' }, 'a wait of its own')
  f.options.delayMs = undefined
  const leaking = await fake(t, { apiKey: 'sk-right' })
  const denied = await failure(t, provider(leaking, '/api/embed', { apiKey: 'sk-wrong' }).embed(['a'], signal()))
  t.match(denied, { status: 401, detail: 'unauthorized', reason: 'the provider answered HTTP 401: unauthorized' })
})

async function startServer (t: Test, handle: (res: ServerResponse, path: string) => void): Promise<{ url: string }> {
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => handle(res, req.url ?? '/'))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }
}

t.test('a provider that misbehaves: unreachable, silent, stalling, redirecting, oversized or not JSON — each a clear error', async (t) => {
  const free = createServer()
  await new Promise<void>(resolve => free.listen(0, '127.0.0.1', resolve))
  const port = (free.address() as { port: number }).port
  await new Promise(resolve => free.close(resolve))
  const unreachable = await failure(t, provider({ url: `http://127.0.0.1:${port}` }, '/v1/embeddings', { retries: 1 }).embed(['a'], signal()))
  t.match(unreachable.message, /could not be reached \(ECONNREFUSED\)/)
  t.match(unreachable.cause, { message: 'fetch failed', cause: { code: 'ECONNREFUSED' } }, 'the network error behind it is the cause, for the log line')
  const silent = await startServer(t, () => {})
  t.match((await failure(t, provider(silent, '/v1/embeddings', { timeoutMs: 100, retries: 0 }).embed(['a'], signal()))).message, /did not answer within 100 ms/)
  let stalled = 0
  const stalling = await startServer(t, (res) => { stalled++; res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"data":') })
  t.match((await failure(t, provider(stalling, '/v1/embeddings', { timeoutMs: 150, retries: 0 }).embed(['a'], signal()))).message, /did not finish its answer within 150 ms/)
  const redirecting = await startServer(t, (res) => res.writeHead(307, { location: 'http://example.com/steal' }).end())
  t.match((await failure(t, provider(redirecting, '/v1/embeddings', { retries: 0 }).embed(['a'], signal()))).message, /could not be reached \(.*redirect/i, 'a redirect is never followed')
  const declared = await startServer(t, (res) => { res.writeHead(200, { 'content-length': String(65 * 1024 * 1024) }); res.end() })
  t.match((await failure(t, provider(declared, '/v1/embeddings', { retries: 0 }).embed(['a'], signal()))).message, /sent an answer of 68157440 bytes \(more than 67108864\)/)
  const streamed = await startServer(t, (res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    const block = Buffer.alloc(1024 * 1024, 32)
    for (let i = 0; i < 65; i++) res.write(block)
    res.end()
  })
  t.match((await failure(t, provider(streamed, '/v1/embeddings', { retries: 0 }).embed(['a'], signal()))).message, /sent an answer of more than 67108864 bytes/)
  const html = await startServer(t, (res) => res.writeHead(502, { 'content-type': 'text/html' }).end(''))
  t.match((await failure(t, provider(html, '/v1/embeddings', { retries: 0 }).embed(['a'], signal()))).message, /answered HTTP 502: \(no body\)/)
  const odd = await startServer(t, (res) => res.writeHead(404).end('{"detail":"no such route"}'))
  t.match((await failure(t, provider(odd, '/v1/embeddings', { retries: 0 }).embed(['a'], signal()))).message, /answered HTTP 404: \{"detail":"no such route"\}/)
  const garbage = await startServer(t, (res) => res.writeHead(200).end('<html>'))
  t.match((await failure(t, provider(garbage, '/v1/embeddings', { retries: 0 }).embed(['a'], signal()))).message, /sent an answer that is not embeddings: Unexpected token/)
  const badHeader = await failure(t, provider(garbage, '/v1/embeddings', { retries: 0, apiKey: 'a\nb' }).embed(['a'], signal()))
  t.match(badHeader.message, /could not be reached \(.*header/i, 'a key that is no header value')
  const gone = new AbortController()
  gone.abort(new Error('call ended'))
  await t.rejects(provider(garbage, '/v1/embeddings').embed(['a'], gone.signal), /call ended/)
  const slowBody = new AbortController()
  const begun = stalled
  const reading = provider(stalling, '/v1/embeddings', { retries: 0 }).embed(['a'], slowBody.signal)
  // Ended once the answer has begun (its head and first bytes written), not after a guess at when that is.
  await waitUntil(() => stalled > begun, 'the answer to begin')
  slowBody.abort(new Error('call ended mid-answer'))
  await t.rejects(reading, /call ended mid-answer/)
})

t.test('answers checked: count, length, numbers, shapes — every vector made unit length', async (t) => {
  t.throws(() => vectorsOf({ data: [] }, 'openai', 1, undefined), /0 vectors for 1 texts/)
  t.throws(() => vectorsOf(null, 'openai', 1, undefined), /no "data" array/)
  t.throws(() => vectorsOf({ embeddings: [1] }, 'ollama', 1, undefined), /no "embeddings" array of arrays/)
  t.throws(() => vectorsOf(null, 'ollama', 1, undefined), /no "embeddings" array of arrays/)
  t.throws(() => vectorsOf({ embeddings: [[1, 2], [1]] }, 'ollama', 2, undefined), /vector 1 has 1 dimensions, vector 0 has 2/)
  t.throws(() => vectorsOf({ embeddings: [[]] }, 'ollama', 1, 4), /vector 0 has 0 dimensions, vector 0 has 4/)
  t.throws(() => vectorsOf({ embeddings: [[1, null]] }, 'ollama', 1, undefined), /vector 0 holds null/)
  t.throws(() => vectorsOf({ data: [{ embedding: 'AAA' }] }, 'openai', 1, undefined), /data\[0\]\.embedding is base64 of 2 bytes, not float32s/)
  t.throws(() => vectorsOf({ data: [{ embedding: { x: 1 } }] }, 'openai', 1, undefined), /data\[0\]\.embedding is not an array of numbers/)
  t.same(Array.from(vectorsOf({ data: [{ embedding: [3, 4] }] }, 'openai', 1, undefined)[0]), [0.6000000238418579, 0.800000011920929], 'without indexes, in order; unit length')
  t.same(Array.from(vectorsOf({ embeddings: [[0, 0]] }, 'ollama', 1, undefined)[0]), [0, 0], 'a zero vector stays zero')
  fc.assert(fc.property(fc.array(fc.array(fc.oneof(fc.constant(0), fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter(x => Math.abs(x) > 1e-150)), { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 5 }), (raw) => {
    const vectors = vectorsOf({ data: raw.map((embedding, index) => ({ index, embedding })).reverse() }, 'openai', raw.length, 3)
    return vectors.every((v, i) => {
      const norm = Math.hypot(...raw[i])
      const length = Math.hypot(...v)
      return norm === 0 ? length === 0 : Math.abs(length - 1) < 1e-5 && v.every((x, d) => Math.abs(x - raw[i][d] / norm) < 1e-5)
    })
  }), runs(200))
  // Whatever a provider sends, the answer is vectors or an Error with a message — never a crash or a hang.
  fc.assert(fc.property(fc.jsonValue(), fc.constantFrom('openai' as const, 'ollama' as const), (answer, api) => {
    try {
      vectorsOf(answer, api, 1, undefined)
    } catch (err) {
      return err instanceof Error && err.message.length > 0
    }
    return true
  }), runs(500))
})

t.test('the fake provider: only its two routes, a single string input, a body that is not JSON', async (t) => {
  const f = await fake(t, { dims: 4 })
  t.equal((await fetch(`${f.url}/v1/embeddings`)).status, 404, 'GET')
  t.match(await (await fetch(`${f.url}/v1/chat`, { method: 'POST', body: '{}' })).json(), { error: 'no route POST /v1/chat' })
  const one = await (await fetch(`${f.url}/api/embed`, { method: 'POST', body: JSON.stringify({ model: 'm', input: 'retry upload' }) })).json() as { embeddings: number[][] }
  t.same(one.embeddings, [fakeEmbedding('retry upload', 4)])
  t.equal((await fetch(`${f.url}/api/embed`, { method: 'POST', body: '{' })).status, 500)
  t.same(fakeEmbedding('', 3), [0, 0, 0], 'no token: the zero vector')
})
