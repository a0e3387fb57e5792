import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import type { Config } from '../../src/base/config.js'
import { createRuntime } from '../../src/runtime.js'
import { captureLogger } from '../helpers/engine.js'
import { threeRoots } from '../helpers/roots.js'
import { waitUntil } from '../helpers/wait.js'

// The engine's side of client roots: a 2025 session whose client declared `roots` is asked roots/list on
// its first tool call (once, shared by concurrent calls), asked again after roots/list_changed, and served
// as configured when the client cannot answer. Config can turn the asking off.

type Message = Record<string, any>

async function sessionOver (t: Test, config: Config, capabilities: Record<string, unknown>) {
  const { log, lines } = captureLogger()
  const runtime = await createRuntime(config, log)
  const sent: Message[] = []
  const session = runtime.server.openSession({ send: (m) => sent.push(JSON.parse(m)) })
  t.teardown(() => session.close())
  await session.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 't', version: '1' } } })
  let id = 0
  const call = (name: string, args: Record<string, unknown> = {}): Promise<Message> =>
    session.handle({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }).then(raw => JSON.parse(raw as string))
  /** The next roots/list the server sent, once it is there. */
  async function asked (count: number): Promise<Message> {
    const requests = (): Message[] => sent.filter(m => m.method === 'roots/list')
    await waitUntil(() => requests().length >= count, `roots/list number ${count}`)
    return requests()[count - 1]
  }
  const answer = async (request: Message, body: Message): Promise<void> => { await session.handle({ jsonrpc: '2.0', id: request.id, ...body }) }
  return { session, sent, call, asked, answer, lines }
}

const entries = (result: Message): string[] => result.result.structuredContent.entries

t.test('asked once on the first call, shared by concurrent calls; list_changed asks again', async (t) => {
  const { config, docs, plain } = await threeRoots(t)
  const s = await sessionOver(t, config, { roots: { listChanged: true } })
  const [first, second] = [s.call('list_directory'), s.call('find_files', { patterns: ['*.md'] })]
  await s.answer(await s.asked(1), { result: { roots: [{ uri: pathToFileURL(docs).href, name: 'docs' }, null, 'not a root'] } })
  t.same(entries(await first), ['guide/', 'README.md', 'to-app', 'to-secret'], 'docs alone, as a single root')
  t.same((await second).result.structuredContent.files, ['README.md', 'guide/intro.md'])
  t.same(entries(await s.call('list_directory')), ['guide/', 'README.md', 'to-app', 'to-secret'], 'not asked again')
  t.equal(s.sent.filter(m => m.method === 'roots/list').length, 1)

  await s.session.handle({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' })
  const third = s.call('list_directory')
  await s.answer(await s.asked(2), { result: { roots: [{ uri: pathToFileURL(docs).href }, { uri: pathToFileURL(plain).href }] } })
  t.same(entries(await third), ['docs:/', 'plain:/'], 'two roots: prefixed again')
})

t.test('a client that answers with an error, or not at all, is served the configured roots', async (t) => {
  const { config } = await threeRoots(t)
  const s = await sessionOver(t, config, { roots: {} })
  const first = s.call('list_directory')
  await s.answer(await s.asked(1), { error: { code: -32601, message: 'no roots here' } })
  t.same(entries(await first), ['app:/', 'docs:/', 'plain:/'])
  t.match(s.lines, [{ msg: 'roots/list failed: this session is served the configured roots' }])
  t.same(entries(await s.call('list_directory')), ['app:/', 'docs:/', 'plain:/'], 'and is not asked on every call')
  t.equal(s.sent.filter(m => m.method === 'roots/list').length, 1)
})

t.test('no roots capability, or --client-roots ignore: never asked', async (t) => {
  const { config, docs } = await threeRoots(t)
  const plain = await sessionOver(t, config, {})
  t.same(entries(await plain.call('list_directory')), ['app:/', 'docs:/', 'plain:/'])
  const ignoring = await sessionOver(t, Object.freeze({ ...config, clientRoots: 'ignore' as const }), { roots: { listChanged: true } })
  t.same(entries(await ignoring.call('list_directory')), ['app:/', 'docs:/', 'plain:/'])
  t.equal([...plain.sent, ...ignoring.sent].filter(m => m.method === 'roots/list').length, 0)

  const odd = await sessionOver(t, config, { roots: {} })
  const call = odd.call('list_directory')
  await odd.answer(await odd.asked(1), { result: { roots: pathToFileURL(docs).href } })
  t.same(entries(await call), ['app:/', 'docs:/', 'plain:/'], 'an answer without a roots list narrows nothing')
})

t.test('path completion in a narrowed session offers only what its roots leave visible', async (t) => {
  const { config, docs } = await threeRoots(t)
  const s = await sessionOver(t, config, { roots: {} })
  const channel: Message[] = []
  const complete = (value: string, id: number): Promise<Message> => s.session.handle(
    { jsonrpc: '2.0', id, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'design_review' }, argument: { name: 'design', value } } },
    { send: (m) => channel.push(JSON.parse(m)) }
  ).then(raw => JSON.parse(raw as string))
  const first = complete('', 100)
  await waitUntil(() => channel.some(m => m.method === 'roots/list'), 'roots/list on the request\'s channel')
  const ask = channel.find(m => m.method === 'roots/list') as Message
  t.ok(ask, 'asked on the request\'s own channel')
  await s.answer(ask, { result: { roots: [{ uri: pathToFileURL(docs).href }] } })
  t.same((await first).result.completion.values, ['README.md', 'guide/', 'to-app', 'to-secret'])
  t.same((await complete('app', 101)).result.completion.values, [], 'the other roots are not offered')
  const unasked = await sessionOver(t, config, {})
  const all = await unasked.session.handle({ jsonrpc: '2.0', id: 5, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'design_review' }, argument: { name: 'design', value: '' } } })
  t.same(JSON.parse(all as string).result.completion.values, ['app:/', 'docs:/', 'plain:/'])
})
