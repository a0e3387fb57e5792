import type { Logger } from '../logger.js'
import { createFeatureHandlers, type FeatureHandlers } from './features.js'
import { Deadlines } from './deadlines.js'
import type { Registry } from './registry.js'
import { Session, type SessionOptions } from './session.js'
import type { CallOutcome } from './tool-call.js'

/** Server identity sent in initialize (spec Implementation). */
export interface ServerInfo {
  name: string
  version: string
  title?: string
  description?: string
}

/** Options for the one engine both transports serve. */
export interface McpServerOptions {
  registry: Registry
  log: Logger
  info: ServerInfo
  /** Short generated overview returned in initialize. */
  instructions?: string
  /** Per-call deadline in milliseconds. */
  toolTimeoutMs?: number
  /** Level of the per-call outcome log line. */
  callLogLevel?: 'debug' | 'info'
}

/** Told how a tool call ended: its tool, outcome and duration in seconds (metrics). */
export type CallObserver = (tool: string, outcome: CallOutcome, seconds: number) => void

/** The engine: one registry, one set of handlers, any number of sessions. */
export interface McpServer {
  registry: Registry
  /** Opens a session for one connection (stdio process, HTTP session, or one stateless POST). */
  openSession(options?: Partial<Pick<SessionOptions, 'send' | 'stateless' | 'log'>>): Session
  /** The capabilities object initialize advertises. */
  capabilities: Record<string, unknown>
  /** Tool calls running now, in every session: what a drain that ran out of time leaves unfinished. */
  activeCalls(): ActiveCall[]
  /** Calls `observer` as each tool call ends (metrics); returns the function that stops it. */
  observeCalls(observer: CallObserver): () => void
}

/** A tool call in progress. */
export interface ActiveCall {
  tool: string
  /** How long it has been running, ms. */
  ms: number
}

/** Shared, immutable per-server state every session reads. */
export interface ServerShared {
  registry: Registry
  features: FeatureHandlers
  info: ServerInfo
  instructions?: string
  capabilities: Record<string, unknown>
  toolTimeoutMs: number
  callLogLevel: 'debug' | 'info'
  /** Every running tool call (tool name and start time), added and removed by the sessions. */
  calls: Set<{ tool: string, started: number }>
  /** Set while someone observes calls (metrics); the engine then reports each call's end. */
  onCall?: CallObserver
  /** The deadlines of this server's running calls. */
  deadlines: Deadlines
}

/** Creates the MCP engine; the SDK's Server is not used because it re-validates every message with zod and cannot serve cached bytes (see bench/). */
export function createMcpServer (options: McpServerOptions): McpServer {
  const { registry } = options
  const capabilities: Record<string, unknown> = { tools: { listChanged: false }, logging: {}, completions: {} }
  if (registry.resources.length > 0 || registry.resourceTemplates.length > 0) capabilities.resources = { subscribe: true, listChanged: false }
  if (registry.prompts.length > 0) capabilities.prompts = { listChanged: false }
  const shared: ServerShared = {
    registry,
    features: createFeatureHandlers(registry),
    info: options.info,
    instructions: options.instructions,
    capabilities,
    toolTimeoutMs: options.toolTimeoutMs ?? 30000,
    callLogLevel: options.callLogLevel ?? 'info',
    calls: new Set(),
    deadlines: new Deadlines()
  }
  const observers = new Set<CallObserver>()
  const notify: CallObserver = (tool, outcome, seconds) => { for (const observer of observers) observer(tool, outcome, seconds) }
  return {
    registry,
    capabilities,
    activeCalls: () => [...shared.calls].map(c => ({ tool: c.tool, ms: Date.now() - c.started })),
    observeCalls (observer) {
      observers.add(observer)
      shared.onCall = notify
      return () => {
        observers.delete(observer)
        if (observers.size === 0) shared.onCall = undefined
      }
    },
    openSession: (opts = {}) => new Session(shared, {
      log: opts.log ?? options.log,
      send: opts.send,
      stateless: opts.stateless ?? false
    })
  }
}
