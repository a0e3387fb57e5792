import pino from 'pino'
import { Writable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { createRegistry, type RegistryOptions } from '../../src/mcp/registry/registry.js'
import { createMcpServer, type McpServerOptions } from '../../src/mcp/server.js'
import { defineTool, HEADER_KEY, Inject, inputRequired, textResult, type RunResult } from '../../src/tool-api/define-tool.js'
import { toolError } from '../../src/base/errors.js'
import { systemClock } from '../../src/services/clock.js'
import type { TaskOwner } from '../../src/mcp/tasks/task-store.js'

/** A pino logger that keeps every line as an object, for asserting on log fields. */
export function captureLogger () {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk, _enc, cb) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line))
      cb()
    }
  })
  return { log: pino({ level: 'debug' }, stream), lines }
}

/** Small tools exercising every dispatch path. */
export const testTools = [
  defineTool({
    name: 'echo_text',
    title: 'Echo Text',
    category: 'guide',
    description: 'Echo the given text back, for tests of validation and defaults.',
    annotations: { readOnlyHint: true },
    input: Type.Object({
      text: Type.String({ minLength: 1, description: 'Text to echo, e.g. "hi"' }),
      times: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, default: 1, description: 'Repeat count, e.g. 2' })),
      mode: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('upper')], { description: 'Case, e.g. "upper"' })),
      clock: Inject('clock')
    }),
    run ({ text, times, mode, clock }) {
      const out = (mode === 'upper' ? text.toUpperCase() : text).repeat(times ?? 1)
      return textResult(out, { length: out.length, clockType: typeof clock.now })
    }
  }),
  defineTool({
    name: 'fail_tool',
    title: 'Fail',
    category: 'guide',
    description: 'Fails on purpose, with a tool error or an unexpected exception.',
    annotations: {},
    input: Type.Object({ kind: Type.Union([Type.Literal('tool'), Type.Literal('crash')], { description: 'How to fail, e.g. "tool"' }) }),
    run ({ kind }) {
      if (kind === 'tool') throw toolError('PATH_NOT_FOUND', "No file 'x'", 'call list_directory')
      throw new Error('secret /etc/shadow stack detail')
    }
  }),
  defineTool({
    name: 'slow_tool',
    title: 'Slow',
    category: 'guide',
    description: 'Waits until cancelled or until ms pass, reporting progress.',
    annotations: {},
    input: Type.Object({ ms: Type.Integer({ minimum: 0, description: 'Milliseconds to wait, e.g. 100' }) }),
    async run ({ ms }, ctx) {
      await ctx.progress(1, 2, 'started')
      await ctx.notify('info', { step: 'waiting' })
      await new Promise<void>((resolve, reject) => {
        // The tool's behaviour: it takes `ms` (or ends at its signal) — not a test waiting for something.
        const timer = setTimeout(resolve, ms)
        ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(ctx.signal.reason) }, { once: true })
      })
      await ctx.progress(2, 2, 'done')
      return textResult('finished')
    }
  }),
  defineTool({
    name: 'ask_client',
    title: 'Ask',
    category: 'guide',
    description: 'Sends sampling/createMessage to the client and returns its answer.',
    annotations: {},
    input: Type.Object({}),
    async run (_args, ctx) {
      const answer = await ctx.client.request('sampling/createMessage', { messages: [], maxTokens: 10 })
      return textResult(JSON.stringify(answer))
    }
  }),
  defineTool({
    name: 'needs_search',
    title: 'Needs Search',
    category: 'guide',
    description: 'Only listed when the search service is configured.',
    annotations: {},
    input: Type.Object({ search: Inject('search') }),
    run: () => textResult('ok')
  })
]

/** An engine over the test tools, with the clock service only (so needs_search is gated off). */
export function testEngine (overrides: Partial<RegistryOptions> = {}, serverOptions: Partial<McpServerOptions> = {}) {
  const { log, lines } = captureLogger()
  const registry = createRegistry({ tools: testTools, services: { clock: systemClock }, ...overrides })
  const server = createMcpServer({ registry, log, info: { name: 'test', version: '0.0.0' }, instructions: 'hi', toolTimeoutMs: 1000, ...serverOptions })
  return { registry, server, log, lines }
}

/** Opens a session, initializes it, and returns a call(method, params) helper that parses responses. */
export async function initializedSession (engine: ReturnType<typeof testEngine>, capabilities: Record<string, unknown> = {}, owner?: TaskOwner) {
  const sent: Array<Record<string, unknown>> = []
  const session = engine.server.openSession({ send: (m) => sent.push(JSON.parse(m)), owner })
  let id = 0
  const call = async (method: string, params?: Record<string, unknown>) => {
    const raw = await session.handle({ jsonrpc: '2.0', id: ++id, method, params })
    return raw === undefined ? undefined : JSON.parse(raw)
  }
  await call('initialize', { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 't', version: '1' } })
  await session.handle({ jsonrpc: '2.0', method: 'notifications/initialized' })
  return { session, call, sent }
}

/**
 * `gated_job`, a task-capable tool that works until the test releases it, then answers `result`: `arm()` closes the
 * gate for the calls that start after it and returns the release.
 */
export function gatedTaskTool (result: string) {
  let gate = Promise.resolve()
  const arm = (): () => void => {
    let release!: () => void
    gate = new Promise<void>(resolve => { release = resolve })
    return release
  }
  const tool = defineTool({
    name: 'gated_job',
    title: 'Gated Job',
    category: 'guide',
    description: 'Works until the test releases it; runs as a task.',
    annotations: {},
    input: Type.Object({}),
    task: { support: 'optional' },
    async run () {
      await gate
      return textResult(result)
    }
  })
  return { tool, arm }
}

/**
 * `parked`: reports progress, then waits until its signal aborts or `released` settles; `seen` records which came
 * first. Held by the test, not by a timer: a loaded machine cannot let it finish before a hang-up is processed.
 */
export function parkedTool (seen: string[], released: Promise<void> = new Promise(() => {})) {
  return defineTool({
    name: 'parked',
    title: 'Parked',
    category: 'guide',
    description: 'Waits until its signal aborts or the test releases it, noting which came first.',
    annotations: {},
    input: Type.Object({}),
    async run (_args, ctx) {
      await ctx.progress(1, 2)
      await new Promise<void>(resolve => {
        let ended = false
        const end = (how: string): void => { if (!ended) { ended = true; seen.push(how); resolve() } }
        released.then(() => end('finished'), () => {})
        ctx.signal.addEventListener('abort', () => end('aborted'), { once: true })
      })
      return textResult('done')
    }
  })
}

const NO_ARGS = Type.Object({})
/** `ask_forever`: asks the client the same question (by `method`) on every round, never satisfied. */
export function askForeverTool (method: string, params: Record<string, unknown> = {}) {
  return defineTool<typeof NO_ARGS, RunResult>({
    name: 'ask_forever',
    title: 'Ask Forever',
    category: 'guide',
    description: 'Never satisfied.',
    annotations: {},
    input: NO_ARGS,
    run: () => inputRequired({ again: { method, params } })
  })
}

/** `by_region`: parameters that travel as `Mcp-Param-*` headers too (x-mcp-header), for the 2026 routing checks. */
export const byRegionTool = defineTool({
  name: 'by_region',
  title: 'By Region',
  category: 'guide',
  description: 'Takes a region that travels as a header too.',
  annotations: {},
  input: Type.Object({
    region: Type.Optional(Type.String({ [HEADER_KEY]: 'Region', description: 'Region, e.g. "eu"' })),
    count: Type.Optional(Type.Integer({ [HEADER_KEY]: 'Count', description: 'How many, e.g. 3' })),
    dry: Type.Optional(Type.Boolean({ [HEADER_KEY]: 'Dry-Run', description: 'Only pretend, e.g. true' }))
  }),
  run: ({ region }) => textResult(`region ${String(region)}`)
})

/** A tool that runs until the test releases it: `started` counts runs that began, `running` those not yet ended. */
export function gatedTool (name = 'gated') {
  let release: () => void = () => {}
  let gate = new Promise<void>(resolve => { release = resolve })
  const state = {
    started: 0,
    running: 0,
    /** Lets every run waiting now (and later) finish. */
    release: () => release(),
    /** Holds the runs that start from now on again. */
    close: () => { gate = new Promise<void>(resolve => { release = resolve }) },
    tool: defineTool({
      name,
      title: 'Gated',
      category: 'guide',
      description: 'Runs until the test releases it, or until its signal aborts.',
      annotations: {},
      input: Type.Object({}),
      async run (_args, ctx) {
        state.started++
        state.running++
        try {
          await ctx.progress(1, 2)
          await new Promise<void>((resolve, reject) => {
            gate.then(resolve, reject)
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true })
          })
          return textResult('released')
        } finally {
          state.running--
        }
      }
    })
  }
  return state
}
