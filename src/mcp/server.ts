import type { Logger } from '../base/logger.js'
import { DEFAULT_CALL_LOG_LEVEL } from '../base/config.js'
import { createFeatureHandlers } from './registry/features.js'
import { Deadlines } from './call/deadlines.js'
import { TASK_DEFAULTS, Tasks, type TaskSettings } from './tasks/tasks.js'
import { MemoryTaskStore, NO_OWNER, type TaskOwner, type TaskStore } from './tasks/task-store.js'
import { createDegradations } from '../services/degradations.js'
import { RequestStates } from './call/input-required.js'
import type { Registry } from './registry/registry.js'
import { Connection } from './connection.js'
import type { Envelope, RoutingHeaders } from './era.js'
import { answerModern, type ModernAnswer } from './modern/handler.js'
import { createModernShared, type CacheHints } from './modern/results.js'
import type { RequestChannel, Send } from './wire/channel.js'
import type { RequestId } from './wire/rpc.js'
import { Session, type SessionOptions } from './legacy/session.js'
import type { CallHandle } from './call/call-handle.js'
import { RunningSet, settledWithin } from './idle.js'
import type { CallObserver, NarrowServices, ServerInfo, ServerShared } from './engine-state.js'

export type { CallObserver, NarrowServices, ServerInfo } from './engine-state.js'

/** How long calls aborted for a shutdown get to answer, ms (each answers on its next turn; bounded all the same). */
const STOPPED_ANSWER_MS = 2000

/** Options for the one engine both transports serve. */
export interface McpServerOptions {
  registry: Registry
  log: Logger
  info: ServerInfo
  /** Short generated overview returned in initialize. */
  instructions?: string
  /** Per-call deadline in milliseconds. */
  toolTimeoutMs?: number
  /** Level of the per-call outcome log line. Default: the config's (debug). */
  callLogLevel?: 'debug' | 'info'
  /** Cache hints on 2026-07-28 results. */
  cache?: CacheHints
  /** Where task records are kept (default: this process's memory). */
  taskStore?: TaskStore
  /** Task limits and hints (TASK_DEFAULTS otherwise). */
  tasks?: Partial<TaskSettings>
  /** false: calls never become tasks and neither era advertises them (default true). */
  offerTasks?: boolean
  /** The services a 2025 session's client roots (`roots/list`) leave visible; undefined from it: serve as configured. */
  narrow?: NarrowServices
}

/** The engine: one registry, one set of handlers, any number of sessions. */
export interface McpServer {
  registry: Registry
  /** Opens a session for one connection (stdio process, HTTP session, or one stateless POST). */
  openSession(options?: Partial<Pick<SessionOptions, 'send' | 'stateless' | 'log' | 'owner'>>): Session
  /** Opens a stream connection (stdio) that serves whichever era its client speaks first. */
  openConnection(options: { send: Send, log?: Logger }): Connection
  /** Answers one 2026-07-28 request (HTTP); `close` cancels it when its response stream ends. */
  answerModern(request: { id: RequestId, method: string, params: Record<string, unknown> }, envelope: Envelope, options: { log?: Logger, headers?: RoutingHeaders, channel?: RequestChannel, owner?: TaskOwner }): { answer: Promise<ModernAnswer>, close: () => void }
  /** Ends every open subscriptions/listen with its final result (a shutdown). */
  endSubscriptions(): void
  /** The capabilities object initialize advertises. */
  capabilities: Record<string, unknown>
  /** Tool calls running now, in every session: what a drain that ran out of time leaves unfinished. */
  activeCalls(): ActiveCall[]
  /**
   * Ends the calls still running for a shutdown: each has `graceMs` to answer (a search stopped by windDown
   * answers with its partial result), then the rest are aborted and answer SHUTTING_DOWN. Resolves once every
   * call has answered.
   */
  stopCalls(graceMs: number): Promise<void>
  /** Calls `observer` as each tool call ends (metrics); returns the function that stops it. */
  observeCalls(observer: CallObserver): () => void
}

/** A tool call in progress. */
export interface ActiveCall {
  tool: string
  /** How long it has been running, ms. */
  ms: number
}

/** Creates the MCP engine; the SDK's Server is not used because it re-validates every message with zod and cannot serve cached bytes (see bench/). */
export function createMcpServer (options: McpServerOptions): McpServer {
  const { registry } = options
  const capabilities: Record<string, unknown> = { tools: { listChanged: false }, logging: {}, completions: {} }
  if (registry.resources.length > 0 || registry.resourceTemplates.length > 0) capabilities.resources = { subscribe: true, listChanged: false }
  if (registry.prompts.length > 0) capabilities.prompts = { listChanged: false }
  // 2025-11-25 tasks: listed, cancellable, for tools/call (2026-07-28 says it as the tasks extension).
  const offerTasks = options.offerTasks !== false && registry.tools.some(tool => tool.definition.task !== undefined)
  if (offerTasks) capabilities.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } }
  const observers = new Set<CallObserver>()
  const shared: ServerShared = {
    registry,
    features: createFeatureHandlers(registry),
    info: options.info,
    instructions: options.instructions,
    capabilities,
    toolTimeoutMs: options.toolTimeoutMs ?? 30000,
    callLogLevel: options.callLogLevel ?? DEFAULT_CALL_LOG_LEVEL,
    modern: createModernShared(registry, options.info, capabilities, options.cache),
    states: new RequestStates(),
    narrow: options.narrow,
    tasks: new Tasks(options.taskStore ?? new MemoryTaskStore(), { ...TASK_DEFAULTS, ...options.tasks }, { log: options.log, degradations: registry.services.degradations ?? createDegradations(options.log) }),
    offerTasks,
    activity: {
      calls: new RunningSet(),
      deadlines: new Deadlines(),
      subscriptions: new Set(),
      callEnded: (tool, outcome, seconds) => { for (const observer of observers) observer(tool, outcome, seconds) }
    }
  }
  const { calls } = shared.activity
  return {
    registry,
    capabilities,
    activeCalls: () => [...calls].map(c => ({ tool: c.tool, ms: Date.now() - c.started })),
    async stopCalls (graceMs) {
      if (await settledWithin(calls.empty(), graceMs)) return
      for (const { call } of calls) call.abort(new Error('the server is shutting down'), 'shutdown')
      // An aborted call answers on its next turn (its race is settled by the abort itself); bounded all the same.
      await settledWithin(calls.empty(), STOPPED_ANSWER_MS)
    },
    observeCalls (observer) {
      observers.add(observer)
      return () => { observers.delete(observer) }
    },
    openSession: (opts = {}) => new Session(shared, {
      log: opts.log ?? options.log,
      send: opts.send,
      stateless: opts.stateless ?? false,
      owner: opts.owner
    }),
    openConnection: (opts) => new Connection(shared, { send: opts.send, log: opts.log ?? options.log }),
    answerModern: (request, envelope, opts) => answerModern(shared, request, envelope, { log: opts.log ?? options.log, send: undefined, inflight: new Map<RequestId, CallHandle>(), headers: opts.headers, owner: opts.owner ?? NO_OWNER }, opts.channel),
    endSubscriptions () {
      for (const end of shared.activity.subscriptions) end()
    }
  }
}
