import type { Services } from '../services/index.js'
import type { Deadlines } from './call/deadlines.js'
import type { FeatureHandlers } from './registry/features.js'
import type { RunningSet } from './idle.js'
import type { RequestStates } from './call/input-required.js'
import type { ModernShared } from './modern/results.js'
import type { Registry } from './registry/registry.js'
import type { Tasks } from './tasks/tasks.js'

// The engine's state as its sessions, calls and eras read it: a leaf (it imports no module that imports it), so the
// engine's files depend on it and not on server.ts, which builds it.

/** How a call ended, as logged. */
export type CallOutcome = 'ok' | 'partial' | 'input_required' | 'tool_error' | 'invalid_arguments' | 'timeout' | 'cancelled' | 'failed'

/** Server identity sent in initialize (spec Implementation). */
export interface ServerInfo {
  name: string
  version: string
  title?: string
  description?: string
}

/** Builds the services a client's root URIs leave visible, or undefined when they narrow nothing. */
export type NarrowServices = (uris: readonly unknown[]) => Promise<Services | undefined>

/** Told how a tool call ended: its tool, outcome and duration in seconds (metrics). */
export type CallObserver = (tool: string, outcome: CallOutcome, seconds: number) => void

/** A tool call as the engine's activity holds it: enough to report it and to end it for a shutdown. */
export interface RunningCall {
  tool: string
  /** Epoch ms. */
  started: number
  call: { abort(reason: Error, kind: 'shutdown'): void }
}

/** What the engine is built with: fixed at construction, never reassigned, read by every session. */
export interface EngineSettings {
  readonly registry: Registry
  readonly features: FeatureHandlers
  readonly info: ServerInfo
  readonly instructions?: string
  readonly capabilities: Record<string, unknown>
  readonly toolTimeoutMs: number
  readonly callLogLevel: 'debug' | 'info'
  /** The 2026-07-28 era's capabilities and result decoration. */
  readonly modern: ModernShared
  /** Signs the requestState of input_required answers. */
  readonly states: RequestStates
  /** See McpServerOptions.narrow. */
  readonly narrow?: NarrowServices
  /** Calls that outlived their request (MCP tasks), kept in the store given at construction. */
  readonly tasks: Tasks
  /** Whether a call may become a task (see McpServerOptions.offerTasks). */
  readonly offerTasks: boolean
}

/** What changes while the engine serves: the calls running in every session, their deadlines, open subscriptions. */
export interface EngineActivity {
  /** Every running tool call (tool name, start time, its handle), added and removed by the sessions. */
  readonly calls: RunningSet<RunningCall>
  /** The deadlines of this server's running calls. */
  readonly deadlines: Deadlines
  /** Ends each open subscriptions/listen (graceful: its final result is sent). */
  readonly subscriptions: Set<() => void>
  /** Tells whoever observes calls (metrics) how each one ended; a no-op while no one does. */
  readonly callEnded: CallObserver
}

/** The engine as its sessions see it: its settings, and its activity under `activity`. */
export interface ServerShared extends EngineSettings {
  readonly activity: EngineActivity
}
