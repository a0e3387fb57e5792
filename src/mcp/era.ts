import { APP_ERR_HEADER_MISMATCH, APP_ERR_INVALID_PARAMS, APP_ERR_UNSUPPORTED_VERSION, withRpcData } from '../base/errors.js'
import { LOG_LEVELS, type RequestId } from './wire/rpc.js'
import type { Classified } from './wire/wire.js'

// Which protocol era a message belongs to (the same rule on both transports): a request whose
// params._meta names a protocol version is 2026-07-28 ("modern"); initialize, responses and plain
// requests are 2025 ("legacy"). Precedence of the modern rejections follows the conformance suite
// and the SDK v2 reference: envelope → header mismatch → unsupported version (then, at dispatch:
// headers, unknown method, client capability).

/** Reserved `_meta` keys of the 2026-07-28 revision. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId'
} as const

/** Modern revisions served, newest first (what server/discover advertises). */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28']

/** Revision identifiers are ISO dates: every one from 2026-07-28 on is modern. */
export const isModernVersion = (version: string): boolean => version >= '2026-07-28'

/** A validated per-request envelope. */
export interface Envelope {
  protocolVersion: string
  clientCapabilities: Record<string, unknown>
  clientInfo: Record<string, unknown> | undefined
  /** Index into LOG_LEVELS; undefined when the request asked for no log notifications. */
  logLevel: number | undefined
}

/** The HTTP routing headers (absent on stdio). */
export interface RoutingHeaders {
  protocolVersion?: string
  method?: string
  name?: string
  /** `Mcp-Param-*` headers by the lower-cased name after the prefix. */
  params?: Record<string, string>
}

/** A refusal before any handler: an APP_ERR_* whose statusCode is the HTTP status it travels with. */
export type Rejection = Error & { statusCode?: number }

/** Where a message goes: the 2025 session, the modern engine, or straight back as an error. */
export type Route =
  | { era: 'legacy' }
  | { era: 'modern', envelope: Envelope | undefined }
  | { era: 'reject', id: RequestId | null, error: Rejection }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const LEGACY: Route = { era: 'legacy' }

const reject = (id: RequestId | null, error: Rejection): Route => ({ era: 'reject', id, error })

const mismatch = (id: RequestId | null, what: string): Route => reject(id, new APP_ERR_HEADER_MISMATCH(what))

/** Validates a claimed envelope; the first problem, naming its key, or the envelope. */
export function readEnvelope (meta: Record<string, unknown>): Envelope | string {
  const version = meta[META.protocolVersion]
  if (typeof version !== 'string' || version === '') return `${META.protocolVersion} must be a protocol version string, e.g. "2026-07-28"`
  const capabilities = meta[META.clientCapabilities]
  if (!isObject(capabilities)) return `${META.clientCapabilities} is required: an object of the client's capabilities for this request ({} for none)`
  const info = meta[META.clientInfo]
  if (info !== undefined && !isObject(info)) return `${META.clientInfo} must be an object with name and version`
  const level = meta[META.logLevel]
  const logLevel = level === undefined ? undefined : LOG_LEVELS.indexOf(level as string)
  if (logLevel === -1) return `${META.logLevel} must be one of ${LOG_LEVELS.join(', ')}`
  return { protocolVersion: version, clientCapabilities: capabilities, clientInfo: info as Record<string, unknown> | undefined, logLevel }
}

/** stdio's routing headers: none (one object for every message, not one each). */
const NO_HEADERS: RoutingHeaders = Object.freeze({})

/** Sorts one classified message into its era; `headers` are the HTTP routing headers (none on stdio). */
export function routeMessage (message: Classified, headers: RoutingHeaders = NO_HEADERS): Route {
  if (message.kind !== 'request' && message.kind !== 'notification') return LEGACY
  const id = message.kind === 'request' ? message.id : null
  const meta = isObject(message.params._meta) ? message.params._meta : undefined
  const headerModern = headers.protocolVersion !== undefined && isModernVersion(headers.protocolVersion)
  if (meta === undefined || !Object.hasOwn(meta, META.protocolVersion)) {
    if (!headerModern) return LEGACY
    if (message.method === 'initialize') return mismatch(id, `initialize is the 2025 handshake, but MCP-Protocol-Version names ${headers.protocolVersion}`)
    // Notifications carry no envelope: the header decides for them.
    if (message.kind === 'notification') return { era: 'modern', envelope: undefined }
    return reject(id, withRpcData(new APP_ERR_INVALID_PARAMS(`MCP-Protocol-Version names ${headers.protocolVersion}, so params._meta must carry ${META.protocolVersion} and ${META.clientCapabilities}`), { missing: meta === undefined ? ['_meta'] : [META.protocolVersion] }))
  }
  const envelope = readEnvelope(meta)
  if (typeof envelope === 'string') return reject(id, new APP_ERR_INVALID_PARAMS(`invalid _meta envelope: ${envelope}`))
  if (headers.protocolVersion !== undefined && headers.protocolVersion !== envelope.protocolVersion) {
    return mismatch(id, `_meta names protocol version ${envelope.protocolVersion}, MCP-Protocol-Version names ${headers.protocolVersion}`)
  }
  if (headers.method !== undefined && headers.method !== message.method) return mismatch(id, `the body's method is ${message.method}, Mcp-Method names ${headers.method}`)
  if (!MODERN_PROTOCOL_VERSIONS.includes(envelope.protocolVersion)) {
    return reject(id, withRpcData(new APP_ERR_UNSUPPORTED_VERSION(`${envelope.protocolVersion.slice(0, 40)} (supported: ${MODERN_PROTOCOL_VERSIONS.join(', ')})`), { supported: MODERN_PROTOCOL_VERSIONS, requested: envelope.protocolVersion }))
  }
  return { era: 'modern', envelope }
}
