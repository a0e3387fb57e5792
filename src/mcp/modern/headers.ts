import { APP_ERR_HEADER_MISMATCH, withRpcData } from '../../base/errors.js'
import type { Rejection, RoutingHeaders } from '../era.js'
import type { ServerShared } from '../engine-state.js'

// The routing headers of a modern HTTP request (SEP-2243): MCP-Protocol-Version and Mcp-Method on
// every request, Mcp-Name where the body names a tool, prompt or resource, and Mcp-Param-* for the
// parameters a tool publishes with `x-mcp-header`. Each must agree with the body, so a proxy that
// routes on headers never sees a request the server would read differently.

const SENTINEL_PREFIX = '=?base64?'
const SENTINEL_SUFFIX = '?='
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** A header value as the body would spell it: `=?base64?…?=` decoded (undefined when not canonical UTF-8 Base64), anything else literal. */
export function decodeHeaderValue (raw: string): string | undefined {
  const value = raw.trim()
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX) || value.length < SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length) return value
  const b64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length)
  if (!CANONICAL_BASE64.test(b64)) return undefined
  try {
    return utf8.decode(Buffer.from(b64, 'base64'))
  } catch {
    return undefined
  }
}

const mismatch = (message: string, header: string): Rejection => withRpcData(new APP_ERR_HEADER_MISMATCH(message), { header })

/** Which body field Mcp-Name mirrors, per method. */
const NAME_SOURCE: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri', 'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId' }

/** A primitive as a header spells it; undefined for anything a header cannot carry. */
function primitive (value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return String(value)
  return undefined
}

/** The first routing header that disagrees with the body, or undefined when they all agree. */
export function checkRoutingHeaders (shared: ServerShared, method: string, params: Record<string, unknown>, headers: RoutingHeaders): Rejection | undefined {
  if (headers.protocolVersion === undefined) return mismatch('the MCP-Protocol-Version header is required on every request', 'MCP-Protocol-Version')
  if (headers.method === undefined) return mismatch(`the Mcp-Method header is required (here: ${method})`, 'Mcp-Method')
  const field = NAME_SOURCE[method]
  if (field !== undefined) {
    const body = params[field]
    const header = headers.name === undefined ? undefined : decodeHeaderValue(headers.name)
    if (typeof body === 'string' && headers.name === undefined) return mismatch(`the body names ${field} ${JSON.stringify(body.slice(0, 100))}, but the Mcp-Name header is absent`, 'Mcp-Name')
    if (headers.name !== undefined && header !== body) return mismatch(`Mcp-Name does not match the body's ${field}`, 'Mcp-Name')
  }
  if (method === 'tools/call' && typeof params.name === 'string') return checkParamHeaders(shared, params, headers)
  return undefined
}

/** Mcp-Param-* against the tool's `x-mcp-header` parameters (an absent or null argument needs no header). */
function checkParamHeaders (shared: ServerShared, params: Record<string, unknown>, headers: RoutingHeaders): Rejection | undefined {
  const tool = shared.registry.tool(params.name as string)
  if (tool === undefined || tool.headers.length === 0) return undefined
  const args = (typeof params.arguments === 'object' && params.arguments !== null ? params.arguments : {}) as Record<string, unknown>
  for (const { param, header, type } of tool.headers) {
    const body = primitive(args[param])
    if (body === undefined) continue
    const name = `Mcp-Param-${header}`
    const raw = headers.params?.[header.toLowerCase()]
    if (raw === undefined) return mismatch(`the body carries ${param}, but the ${name} header is absent`, name)
    const value = decodeHeaderValue(raw)
    if (value === undefined) return mismatch(`the ${name} header is not valid Base64 inside =?base64?…?=`, name)
    const numeric = (type === 'integer' || type === 'number') && typeof args[param] === 'number' && DECIMAL.test(value)
    if (numeric ? Number(value) !== args[param] : value !== body) return mismatch(`the ${name} header does not match the body's ${param}`, name)
  }
  return undefined
}
