import t from 'tap'
import fc from 'fast-check'
import { META, readEnvelope, routeMessage, type RoutingHeaders } from '../../src/mcp/era.js'
import { RPC_ERROR, toRpcError } from '../../src/mcp/wire/rpc.js'
import { classify } from '../../src/mcp/wire/wire.js'
import { runs } from '../helpers/property.js'

// The era classifier both transports use: what is 2025, what is 2026-07-28, and which error a
// malformed modern request gets first.

const envelope = (extra: Record<string, unknown> = {}) => ({ [META.protocolVersion]: '2026-07-28', [META.clientCapabilities]: {}, ...extra })
const request = (method: string, params?: Record<string, unknown>, id: number | string = 1) => classify({ jsonrpc: '2.0', id, method, params })
const route = (method: string, params?: Record<string, unknown>, headers?: RoutingHeaders) => routeMessage(request(method, params), headers)

t.test('2025 traffic stays 2025: initialize, plain requests, responses, notifications without a modern header', async (t) => {
  t.same(route('initialize', { protocolVersion: '2025-11-25', capabilities: {} }), { era: 'legacy' })
  t.same(route('tools/list'), { era: 'legacy' })
  t.same(route('tools/list', { _meta: { progressToken: 1 } }, { protocolVersion: '2025-11-25' }), { era: 'legacy' })
  t.same(routeMessage(classify({ jsonrpc: '2.0', id: 1, result: {} })), { era: 'legacy' })
  t.same(routeMessage(classify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })), { era: 'legacy' })
})

t.test('an envelope makes a request modern, with the capabilities, client and log level it declares', async (t) => {
  const out = route('tools/call', { name: 'x', _meta: envelope({ [META.clientInfo]: { name: 'c', version: '1' }, [META.logLevel]: 'warning' }) })
  t.same(out, { era: 'modern', envelope: { protocolVersion: '2026-07-28', clientCapabilities: {}, clientInfo: { name: 'c', version: '1' }, logLevel: 3 } })
  t.same(route('server/discover', { _meta: envelope() }, { protocolVersion: '2026-07-28', method: 'server/discover' }), { era: 'modern', envelope: { protocolVersion: '2026-07-28', clientCapabilities: {}, clientInfo: undefined, logLevel: undefined } })
  // A notification carries no envelope: a modern header is what makes it modern.
  t.same(routeMessage(classify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} }), { protocolVersion: '2026-07-28' }), { era: 'modern', envelope: undefined })
})

t.test('rejections, each with the request id and status 400: envelope, header mismatch, unsupported version', async (t) => {
  const code = (out: ReturnType<typeof route>) => out.era === 'reject' ? [out.id, toRpcError(out.error, { modern: true }).code, out.error.statusCode] : out.era
  t.same(code(route('tools/list', {}, { protocolVersion: '2026-07-28' })), [1, -32602, 400], 'a modern header without an envelope')
  t.same(code(route('tools/list', { _meta: { [META.clientCapabilities]: {} } }, { protocolVersion: '2026-07-28' })), [1, -32602, 400], 'an envelope without its version')
  t.same(code(route('tools/list', { _meta: { [META.protocolVersion]: '2026-07-28' } })), [1, -32602, 400], 'no clientCapabilities')
  t.same(code(route('tools/list', { _meta: envelope({ [META.clientInfo]: 'me' }) })), [1, -32602, 400], 'clientInfo not an object')
  t.same(code(route('tools/list', { _meta: envelope({ [META.logLevel]: 'loud' }) })), [1, -32602, 400], 'an unknown log level')
  t.same(code(route('initialize', { protocolVersion: '2025-11-25', capabilities: {} }, { protocolVersion: '2026-07-28' })), [1, RPC_ERROR.HeaderMismatch, 400])
  t.same(code(route('tools/list', { _meta: envelope() }, { protocolVersion: '2025-11-25' })), [1, RPC_ERROR.HeaderMismatch, 400])
  t.same(code(route('tools/list', { _meta: envelope() }, { method: 'TOOLS/LIST' })), [1, RPC_ERROR.HeaderMismatch, 400], 'method values are case-sensitive')
  // The header is checked before the version, so a body naming an unknown version under a good header is a mismatch.
  t.same(code(route('tools/list', { _meta: envelope({ [META.protocolVersion]: 'v999' }) }, { protocolVersion: '2026-07-28' })), [1, RPC_ERROR.HeaderMismatch, 400])
  const unsupported = route('tools/list', { _meta: envelope({ [META.protocolVersion]: '2025-11-25' }) }, { protocolVersion: '2025-11-25' })
  t.match(code(unsupported), [1, RPC_ERROR.UnsupportedProtocolVersion, 400])
  t.match(unsupported, { era: 'reject', error: { rpcData: { supported: ['2026-07-28'], requested: '2025-11-25' } } })
})

t.test('property: any valid envelope routes modern, any request without one (and no modern header) routes 2025', async (t) => {
  const method = fc.string({ minLength: 1, maxLength: 30 })
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 10 }))
  const capabilities = fc.dictionary(fc.constantFrom('sampling', 'elicitation', 'roots', 'experimental'), fc.constant({}))
  await fc.assert(fc.property(method, id, capabilities, (m, i, caps) => {
    const modern = routeMessage(request(m, { _meta: envelope({ [META.clientCapabilities]: caps }) }, i))
    const legacy = routeMessage(request(m, { other: caps }, i))
    return modern.era === 'modern' && modern.envelope?.clientCapabilities === caps && (legacy.era === 'legacy' || m === 'initialize')
  }), runs(300))
  // A claim with any non-string version is refused, never silently served as 2025.
  await fc.assert(fc.property(fc.anything().filter(v => typeof v !== 'string' || v === ''), (version) => {
    return typeof readEnvelope({ [META.protocolVersion]: version, [META.clientCapabilities]: {} }) === 'string'
  }), runs(200))
})
