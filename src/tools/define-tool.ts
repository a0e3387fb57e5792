import { Type, type Static, type TObject, type TUnsafe } from '@sinclair/typebox'
import type { Logger } from '../logger.js'
import type { ServiceName, Services } from '../services/index.js'

/** Schema keyword that marks a parameter as an injected service (stripped from the wire schema). */
export const INJECT_KEY = 'x-workspace-mcp-inject'

/** Declares an injected service parameter: typed as T for `run`, invisible to clients. */
export function Inject<K extends ServiceName> (service: K): TUnsafe<NonNullable<Services[K]>> {
  return Type.Unsafe<NonNullable<Services[K]>>({ [INJECT_KEY]: service })
}

/** Guide categories, in the order the guide renders them. */
export const TOOL_CATEGORIES = ['navigation', 'search', 'read', 'guide', 'fixture'] as const
/** A tool's category. */
export type ToolCategory = typeof TOOL_CATEGORIES[number]

/** Tool behaviour hints (spec ToolAnnotations). */
export interface ToolAnnotations {
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

/** Content blocks a tool may return (spec ContentBlock). */
export type ToolContent =
  | { type: 'text', text: string }
  | { type: 'image', data: string, mimeType: string }
  | { type: 'audio', data: string, mimeType: string }
  | { type: 'resource', resource: { uri: string, mimeType?: string, text?: string, blob?: string } }
  | { type: 'resource_link', uri: string, name: string, mimeType?: string, description?: string }

/** What `run` returns (spec CallToolResult). */
export interface ToolResult {
  content: ToolContent[]
  structuredContent?: Record<string, unknown>
  isError?: boolean
  /** Server side only, never sent: a deadline or cap cut the work short, so the call is logged `partial`. */
  partial?: boolean
}

/** A worked example shown in the guide; validated against the input schema at startup. */
export interface ToolExample {
  comment: string
  arguments: Record<string, unknown>
}

/** The peer of the current call: its declared capabilities and server→client requests. */
export interface ClientChannel {
  /** Capabilities the client declared in initialize (empty object before it). */
  capabilities: Record<string, unknown>
  /** Sends a server→client request (sampling/createMessage, elicitation/create …) and awaits its result. */
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>
}

/** Per-call context handed to `run` beside the arguments. */
export interface ToolContext {
  /** Aborted on client cancellation, deadline or shutdown. */
  signal: AbortSignal
  /** Request-scoped logger (server side; never reaches the client). */
  log: Logger
  /** Sends notifications/progress when the client asked for it; a no-op otherwise. */
  progress(progress: number, total?: number, message?: string): Promise<void>
  /** Sends notifications/message (MCP logging) at or above the client's chosen level. */
  notify(level: 'debug' | 'info' | 'notice' | 'warning' | 'error', data: unknown): Promise<void>
  /** The client side of this session. */
  client: ClientChannel
  /**
   * Ends the connection this call's messages travel on, where the client can pick it up again (HTTP
   * with an event store: GET + Last-Event-ID, SEP-1699); elsewhere nothing happens. For long calls
   * behind proxies that cut idle connections, and for the conformance fixture that tests resumption.
   */
  closeStream(): void
}

/** The whole tool-author API: one object per tool. */
export interface ToolDefinition<I extends TObject = TObject> {
  /** Wire name, `snake_case`, verb first. */
  name: string
  /** Human title for clients. */
  title: string
  category: ToolCategory
  /** First sentence ≤ 200 chars says what it does (and how to batch). */
  description: string
  annotations: ToolAnnotations
  /** Parameters, including Inject() services. */
  input: I
  /** Shape of structuredContent, if the tool returns one. */
  output?: TObject
  examples?: ToolExample[]
  /** What the TIMEOUT error suggests, i.e. what actually shortens this tool's work. */
  timeoutHint?: string
  run(args: Static<I>, ctx: ToolContext): Promise<ToolResult> | ToolResult
}

/** A tool of any input shape, as lists and the registry hold it. */
export type AnyTool = ToolDefinition<TObject>

/** Defines a tool; the registry derives the wire schema, validator and requirements from it. */
export function defineTool<I extends TObject> (definition: ToolDefinition<I>): ToolDefinition<I> {
  return definition
}

/** A text result (Markdown first), optionally with structuredContent. */
export function textResult (text: string, structuredContent?: Record<string, unknown>): ToolResult {
  return structuredContent === undefined
    ? { content: [{ type: 'text', text }] }
    : { content: [{ type: 'text', text }], structuredContent }
}
