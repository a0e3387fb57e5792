import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { semanticFixture, settled, signal } from '../../helpers/semantic-fixture.js'
import { waitUntil } from '../../helpers/wait.js'

// How semantic search lives with a provider that fails: a refusal, an outage, a slow query — each against the fake
// provider misbehaving that way, the recovery's timers fired by the test.

t.test('semantic search: a provider that fails stops the run with its reason; a call that finds it answering resumes it at once', async (t) => {
  const s = await semanticFixture(t, { fake: { faults: [503] }, settings: { dimensions: 64 } })
  await settled(s)
  t.same(s.semantic.status(), { state: 'failed', model: 'fake', dims: 64, vectors: 0, embedded: 0, capped: false, error: 'the provider answered HTTP 503: fault 503', retryAt: s.clock.timers.now() + 60_000 }, 'the reason in one line, and when the provider is asked again')
  const asked = s.fake.requests.length
  await t.rejects(s.semantic.embedQuery('anything', signal()), { message: 'ERROR EMBEDDINGS_FAILED: vectors are unavailable: the provider answered HTTP 503: fault 503.', next: { step: 'rank-by-words' } }, 'a failure just seen is known: the call does not ask again')
  t.equal(s.fake.requests.length, asked)
  s.clock.advance(30_000)
  await s.semantic.embedQuery('anything', signal())
  t.equal(s.fake.requests.length, asked + 1, 'half a minute on, a call asks once, and finds it answering')
  t.equal(s.clock.pending, 0, 'the scheduled probe is cancelled')
  t.equal(s.semantic.status().state, 'embedding', 'the embedding resumed at once, not at the next scan or probe')
  await settled(s)
  t.match(s.semantic.status(), { state: 'ready', vectors: s.index.status().chunks })
  t.equal(s.semantic.status().error, undefined)
  t.equal(s.semantic.status().retryAt, undefined)
})

t.test('semantic search: a refusal of the request itself (a parameter such as `dimensions`) stops the embedding on the first batch, with its reason; no chunk is split out', async (t) => {
  const refusal = 'This model does not support specifying dimensions.'
  const s = await semanticFixture(t, { fake: { refuseDimensions: refusal }, settings: { dimensions: 384, batchSize: 8 } })
  await settled(s)
  t.same(s.fake.requests.length, 1, 'one request: the refusal names `dimensions`, so it is not about a text')
  t.match(s.semantic.status(), { state: 'failed', vectors: 0, embedded: 0, error: `the provider refused the request: HTTP 400: ${refusal}` })
  t.same(s.clock.delays, [60_000], 'the provider is asked again in a minute')
  s.clock.fire()
  await waitUntil(() => s.clock.pending > 0, 'the probe to be refused and the next one set')
  t.equal(s.fake.requests.length, 2, 'the probe asks once')
  t.same(s.fake.requests[1], { path: '/v1/embeddings', model: 'fake', inputs: ['dimensions'], dimensions: 384 }, 'with the same parameters: a refusal of them stays')
  t.match(s.semantic.status(), { state: 'failed', error: `the provider refused the request: HTTP 400: ${refusal}` })
  t.same(s.clock.delays, [60_000, 120_000], 'and again in two')

  // A refusal that names nothing: a one-word request is refused too, so it is the request's.
  const vague = await semanticFixture(t, { fake: { refuseDimensions: 'Invalid request.' }, settings: { dimensions: 384, batchSize: 8 } })
  await settled(vague)
  t.same(vague.fake.requests.map(r => r.inputs.length > 1 ? 'batch' : r.inputs[0]), ['batch', 'dimensions'], 'the batch, then one word: two requests, not one per chunk')
  t.match(vague.semantic.status(), { state: 'failed', vectors: 0, error: 'the provider refused the request: HTTP 400: Invalid request.' })
})

t.test('semantic search: through an outage the server probes with backoff (1 min doubling to 30), scans and calls do not hammer the provider, and embedding resumes when it answers', async (t) => {
  const s = await semanticFixture(t, { fake: { failWith: 503 }, settings: { dimensions: 64 } })
  await settled(s)
  t.match(s.semantic.status(), { state: 'failed', error: 'the provider answered HTTP 503: down (503)' })
  const asked = s.fake.requests.length
  fs.appendFileSync(path.join(s.root, 'src/config.py'), '\ndef more ():\n    return 1\n')
  await settled(s)
  t.equal(s.fake.requests.length, asked, 'a scan during the outage does not start a run')
  const during = await s.semantic.search({ text: 'retry failed upload', terms: ['retry', 'upload'] }, undefined, 10, signal())
  t.equal(s.fake.requests.length, asked, 'nor does a call, while the failure is known')
  t.match(during.wordsOnly, { reason: 'the provider answered HTTP 503: down (503)', retryAt: s.clock.timers.now() + 60_000 })
  t.match(s.index.chunksById([during.hits[0].id]), [{ path: path.join(s.root, 'src/upload.ts') }], 'ranked by its words')
  t.equal(during.hits[0].similarity, undefined)
  for (let i = 0; i < 6; i++) {
    s.clock.fire()
    await waitUntil(() => s.clock.pending > 0, 'the probe to fail and the next one to be set')
  }
  t.same(s.clock.delays, [60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000], 'doubling, to the cap')
  t.equal(s.fake.requests.length, asked + 6, 'one request per probe')
  t.match(s.semantic.status(), { state: 'failed', retryAt: s.clock.timers.now() + 1_800_000 })
  s.fake.options.failWith = undefined
  s.clock.fire()
  await waitUntil(() => s.semantic.status().state === 'ready', 'the embedding to resume and finish', 60_000)
  t.match(s.semantic.status(), { state: 'ready', vectors: s.index.status().chunks }, 'the probe found it answering: embedding resumed, without a call')
  t.equal(s.semantic.status().error, undefined)
  t.equal(s.clock.pending, 0)
  const after = await s.semantic.search({ text: 'retry failed upload', terms: ['retry', 'upload'] }, undefined, 10, signal())
  t.equal(after.wordsOnly, undefined, 'the next call is by meaning again')
  t.ok(after.hits[0].similarity !== undefined)
  s.fake.options.failWith = 503
  s.clock.fire()
  t.equal(s.clock.pending, 0, 'nothing scheduled while nothing failed')
})

t.test('semantic search: a query waits at most 2 s, tries once, and its vector serves every page of its result set', async (t) => {
  const s = await semanticFixture(t, { settings: { dimensions: 64, timeoutMs: 150, retries: 3 } })
  await settled(s)
  const asked = s.fake.requests.length
  const query = { text: 'retry failed upload', terms: ['retry', 'upload'] }
  const first = await s.semantic.search(query, undefined, 10, signal())
  t.same(await s.semantic.search(query, undefined, 10, signal()), first, 'the same ranking')
  await s.semantic.embedQuery('retry failed upload', signal())
  t.equal(s.fake.requests.length, asked + 1, 'embedded once for every page')
  for (let i = 0; i < 64; i++) await s.semantic.embedQuery(`query ${i}`, signal())
  t.equal(s.fake.requests.length, asked + 65)
  await s.semantic.embedQuery('query 63', signal())
  t.equal(s.fake.requests.length, asked + 65, 'the most recent are kept')
  await s.semantic.search(query, undefined, 10, signal())
  t.equal(s.fake.requests.length, asked + 66, 'at most 64: the oldest was let go')

  s.fake.options.delayMs = 400
  const slow = await s.semantic.search({ text: 'parse config', terms: ['parse', 'config'] }, undefined, 10, signal())
  t.match(slow.wordsOnly, { reason: 'the provider did not answer within 150 ms' }, 'a provider slower than the query\'s wait: by words')
  t.equal(s.fake.requests.length, asked + 67, 'one try, no retries')
  t.equal(s.semantic.status().state, 'failed')
  const gone = new AbortController()
  gone.abort(new Error('call ended'))
  s.clock.advance(30_000)
  await t.rejects(s.semantic.search({ text: 'another', terms: [] }, undefined, 10, gone.signal), /call ended/, 'a call that ends is not a provider failure')
  t.match(s.semantic.status(), { state: 'failed', error: 'the provider did not answer within 150 ms' })
})
