import { Type, type Static, type TObject, type TUnsafe } from '@sinclair/typebox'
import type { Logger } from '../base/logger.js'
import { isToolError, type ToolErrorCode } from '../base/errors.js'
import { withNextStep } from './next-step.js'
import type { ServiceName, Services } from '../services/index.js'

/** Schema keyword that marks a parameter as an injected service (stripped from the wire schema). */
export const INJECT_KEY = 'x-workspace-mcp-inject'

/** Schema keyword that publishes a primitive parameter as the HTTP header `Mcp-Param-<value>` (SEP-2243), e.g. `{ 'x-mcp-header': 'Region' }`. */
export const HEADER_KEY = 'x-mcp-header'

/** Declares an injected service parameter: typed as T for `run`, invisible to clients. Wrapped in `Type.Optional`, the tool is offered without the service too (it then gets undefined). */
export function Inject<K extends ServiceName> (service: K): TUnsafe<NonNullable<Services[K]>> {
  return Type.Unsafe<NonNullable<Services[K]>>({ [INJECT_KEY]: service })
}

/** Guide categories, in the order the guide renders them. */
export const TOOL_CATEGORIES = ['navigation', 'search', 'read', 'history', 'guide'] as const
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

/** A request the client answers between rounds (spec 2026-07-28 InputRequest: elicitation/create, sampling/createMessage, roots/list). */
export interface InputRequest {
  method: string
  params: Record<string, unknown>
}

/** Returned instead of a result when the tool needs the client's input first (SEP-2322 multi round-trip). */
export interface InputRequiredResult {
  resultType: 'input_required'
  /** What to ask, by a key the tool picks; the next round's `ctx.input.responses` answers by the same keys. */
  inputRequests: Record<string, InputRequest>
  /** Opaque state for the next round (the engine signs it, so a client cannot forge it). */
  requestState?: string
}

/** The client's answers to the previous round, by key, and the state that round returned. */
export interface ToolInput {
  responses: Record<string, Record<string, unknown>>
  state: string | undefined
}

/** Asks the client for input before the call can finish; the engine carries it to the client in either protocol era. */
export function inputRequired (inputRequests: Record<string, InputRequest>, requestState?: string): InputRequiredResult {
  return requestState === undefined ? { resultType: 'input_required', inputRequests } : { resultType: 'input_required', inputRequests, requestState }
}

/** True for a result that asks for input rather than finishing. */
export function isInputRequired (result: object): result is InputRequiredResult {
  return (result as { resultType?: unknown }).resultType === 'input_required'
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
  /** The client's answers when this run is a later round of a call that returned inputRequired(); undefined on the first. */
  readonly input: ToolInput | undefined
  /**
   * Set when this call may run as an MCP task (the tool allows it and the client takes tasks): how long its work may
   * last, ms. A tool can then wait for what it needs (the code index) instead of answering in part.
   */
  readonly taskBudgetMs: number | undefined
  /**
   * Tools this server defines but does not serve (left out by its operator, or missing a service): a text the tool
   * writes for the model names none of them (`pruneMentions(text, ctx.unserved)`; a tool error's hint is pruned for it).
   */
  readonly unserved: ReadonlySet<string>
}

/** What a run may return: a result, or (for a tool declared so) a request for input. */
export type RunResult = ToolResult | InputRequiredResult

/** The whole tool-author API: one object per tool. `R` widens to RunResult for a tool that asks for input. */
export interface ToolDefinition<I extends TObject = TObject, R extends RunResult = ToolResult> {
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
  /**
   * How `input` is published: `flat` (default) is the client-compatible form (optional = not required,
   * literal unions as enum, no $ref); `as-written` keeps the JSON Schema 2020-12 exactly ($schema,
   * $defs, allOf, if/then/else …) and validates arguments with a 2020-12 validator.
   */
  publishInput?: 'flat' | 'as-written'
  /** Client capabilities the tool cannot run without (e.g. `{ sampling: {} }`); a 2026-07-28 request that declares fewer is refused with -32021. */
  clientCapabilities?: Record<string, object>
  /** What the TIMEOUT error suggests, i.e. what actually shortens this tool's work. */
  timeoutHint?: string
  /**
   * What a call gets while the tool is not offered (a service it needs is absent): this tool error rather than
   * "Unknown tool", for a tool a client may remember from a server configured otherwise.
   */
  whenUnavailable?: { code: ToolErrorCode, message: string, hint: string }
  /**
   * Whether a call may run as an MCP task, for a client that takes one: `optional` or `required` (published as
   * execution.taskSupport). A 2025 client asks per call and gets a task at once; a 2026 call becomes one when it is
   * still running after `afterMs` (default 0: a run that returns synchronously still answers at once).
   */
  task?: { support: 'optional' | 'required', afterMs?: number }
  run(args: Static<I>, ctx: ToolContext): Promise<NoInfer<R>> | NoInfer<R>
}

/** A tool of any input shape, as lists and the registry hold it. */
export type AnyTool = ToolDefinition<TObject, RunResult>

/**
 * Defines a tool; the registry derives the wire schema, validator and requirements from it. A tool error a
 * service raised with a next step leaves the tool with that step's hint (tool-api/next-step.ts), and no hint names a tool
 * this server does not serve.
 */
export function defineTool<I extends TObject, R extends RunResult = ToolResult> (definition: ToolDefinition<I, R>): ToolDefinition<I, R> {
  const run = definition.run.bind(definition)
  return {
    ...definition,
    run (args, ctx) {
      const hinted = (err: unknown): never => { throw isToolError(err) ? withNextStep(err, ctx.unserved) : err }
      let out: ReturnType<typeof run>
      try {
        out = run(args, ctx)
      } catch (err) {
        return hinted(err)
      }
      return out instanceof Promise ? out.catch(hinted) : out
    }
  }
}

/** A text result (Markdown first), optionally with structuredContent. */
export function textResult (text: string, structuredContent?: Record<string, unknown>): ToolResult {
  return structuredContent === undefined
    ? { content: [{ type: 'text', text }] }
    : { content: [{ type: 'text', text }], structuredContent }
}
