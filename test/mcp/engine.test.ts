import t from 'tap'
import fc from 'fast-check'
import { Type } from '@sinclair/typebox'
import { defineTool, textResult, type ToolContext } from '../../src/tool-api/define-tool.js'
import { Deadlines } from '../../src/mcp/call/deadlines.js'
import { ERAS, METHODS, methodsOf } from '../../src/mcp/methods.js'
import { gatedTool, initializedSession, testEngine, testTools } from '../helpers/engine.js'
import { runs } from '../helpers/property.js'
import { waitUntil } from '../helpers/wait.js'

// The engine's parts: the method table, the per-server deadline sweep, and the read-only context a tool gets.

let seen: ToolContext | undefined
const tampered: string[] = []

const contextTools = [
  ...testTools,
  defineTool({
    name: 'tamper_context',
    title: 'Tamper',
    category: 'guide',
    description: 'Tries to abort itself, move its deadline and replace its context members, then waits.',
    annotations: {},
    input: Type.Object({ ms: Type.Integer({ minimum: 0, description: 'Milliseconds to wait, e.g. 50' }) }),
    async run ({ ms }, ctx) {
      seen = ctx
      const attempts: Array<[string, () => void]> = [
        ['deadline', () => { (ctx as any).deadline = Date.now() + 60_000 }],
        ['abort', () => { (ctx as any).abort(new Error('self'), 'cancel') }],
        ['signal', () => { (ctx as any).signal = new AbortController().signal }],
        ['log', () => { (ctx as any).log = undefined }],
        ['progress', () => { (ctx as any).progress = async () => {} }],
        ['prototype', () => { Object.getPrototypeOf(ctx).progress = async () => {} }]
      ]
      for (const [name, attempt] of attempts) {
        try {
          attempt()
          tampered.push(name)
        } catch {}
      }
      await new Promise<void>((resolve, reject) => {
        // The tool's behaviour: it takes `ms` (or ends at its signal) — not a test waiting for something.
        const timer = setTimeout(resolve, ms)
        ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(ctx.signal.reason) }, { once: true })
      })
      return textResult(`signal aborted: ${ctx.signal.aborted}`)
    }
  })
]

t.test('a tool\'s context is frozen: it cannot abort itself, move its deadline or swap a member', async (t) => {
  const { call } = await initializedSession(testEngine({ tools: contextTools }, { toolTimeoutMs: 200 }))

  const res = await call('tools/call', { name: 'tamper_context', arguments: { ms: 60_000 } })

  t.strictSame(tampered, [], 'every attempt threw')
  t.ok(Object.isFrozen(seen) && Object.isFrozen(Object.getPrototypeOf(seen)))
  t.strictSame(Object.keys(seen!), ['log'], 'nothing but the logger is an own property')
  t.notOk('abort' in seen! || 'deadline' in seen! || 'cancelled' in seen!, 'the abort handle is not reachable')
  // The deadline the tool tried to push back still fires at the server's 200 ms.
  t.match(res.result.content[0].text, /^ERROR TIMEOUT: tamper_context did not finish within 200 ms/)
  t.equal(seen!.signal.aborted, true)
})

t.test('the method table: each era\'s methods, and names that are not methods are -32601 whatever they spell', async (t) => {
  t.strictSame(ERAS, ['legacy', 'modern'])
  t.strictSame([...methodsOf('legacy').keys()], ['initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read', 'resources/subscribe', 'resources/unsubscribe', 'prompts/list', 'prompts/get', 'completion/complete', 'logging/setLevel', 'tasks/get', 'tasks/cancel', 'tasks/result', 'tasks/list'])
  t.strictSame([...methodsOf('modern').keys()], ['server/discover', 'subscriptions/listen', 'tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get', 'completion/complete', 'tasks/get', 'tasks/cancel', 'tasks/update'])
  t.strictSame(Object.entries(METHODS).filter(([, m]) => 'beforeInitialize' in m).map(([name]) => name), ['initialize', 'ping'])

  const { call } = await initializedSession(testEngine())
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'tools/list/', 'TOOLS/LIST']) {
    t.match(await call(name), { error: { code: -32601 } }, name)
  }
  await fc.assert(fc.asyncProperty(fc.string({ maxLength: 30 }).filter(s => !Object.hasOwn(METHODS, s)), async (name) => {
    const res = await call(name, {})
    return res.error.code === -32601 && res.result === undefined
  }), runs(200))
})

t.test('deadlines belong to a server: each sweeps its own calls and stops when idle', async (t) => {
  const a = new Deadlines()
  const b = new Deadlines()
  const aborted: string[] = []
  const call = (name: string) => ({ deadline: Infinity, abort: () => { aborted.push(name) } })
  const first = call('first')
  const second = call('second')

  a.watch(first, Date.now() + 30, 30)
  b.watch(second, Date.now() + 60_000, 60_000)
  await waitUntil(() => aborted.length > 0, 'the first deadline to pass')

  t.strictSame(aborted, ['first'])
  t.strictSame([a.size, b.size, b.sweeping], [0, 1, true], 'b still sweeps its call, whose deadline is a minute away')
  b.forget(second)
  // 40 idle ticks of at most 25 ms each: both intervals stop on their own.
  await waitUntil(() => !a.sweeping && !b.sweeping, 'both sweeps to stop once idle')
  t.strictSame(aborted, ['first'], 'a forgotten call is never aborted')
})

t.test('two servers with different budgets time out their own calls only', async (t) => {
  const fast = await initializedSession(testEngine({}, { toolTimeoutMs: 100 }))
  const slow = await initializedSession(testEngine({}, { toolTimeoutMs: 60_000 }))

  const [quick, patient] = await Promise.all([
    fast.call('tools/call', { name: 'slow_tool', arguments: { ms: 60_000 } }),
    slow.call('tools/call', { name: 'slow_tool', arguments: { ms: 400 } })
  ])

  t.match(quick.result.content[0].text, /within 100 ms/)
  t.equal(patient.result.content[0].text, 'finished')
})

t.test('stopCalls resolves as the last running call answers, however long its grace; past the grace the rest are stopped and answered first', async (t) => {
  const gated = gatedTool()
  const engine = testEngine({ tools: [...testTools, gated.tool] }, { toolTimeoutMs: 3_600_000 })
  const { call } = await initializedSession(engine)
  const answers = [call('tools/call', { name: 'gated', arguments: {} }), call('tools/call', { name: 'gated', arguments: {} })]
  await waitUntil(() => gated.running === 2, 'both calls to run')
  let stopped = false

  const stopping = engine.server.stopCalls(3_600_000).then(() => { stopped = true })
  await new Promise(resolve => setImmediate(resolve))
  const early = stopped
  gated.release()
  await stopping
  const released = await Promise.all(answers)
  gated.close()
  const late = call('tools/call', { name: 'gated', arguments: {} })
  await waitUntil(() => gated.running === 1, 'the third call to run')
  await engine.server.stopCalls(0)
  const running = engine.server.activeCalls().length
  const shutDown = await late

  t.equal(early, false, 'two calls running: stopCalls waits')
  t.strictSame(released.map(r => r.result.content[0].text), ['released', 'released'])
  t.equal(running, 0, 'with no grace the call is stopped, and stopCalls returns once it answered')
  t.match(shutDown.result.content[0].text, /^ERROR SHUTTING_DOWN: /)
})
