import t from 'tap'
import * as sdk from '@modelcontextprotocol/sdk/types.js'
import { LATEST_PROTOCOL_VERSION, RPC_ERROR, SUPPORTED_PROTOCOL_VERSIONS, toRpcError } from '../../src/mcp/wire/rpc.js'
import { APP_ERR_HEADER_MISMATCH, APP_ERR_MISSING_CLIENT_CAPABILITY, APP_ERR_RESOURCE_NOT_FOUND, APP_ERR_SESSION_NOT_FOUND, APP_ERR_SHUTTING_DOWN, APP_ERR_UNKNOWN_TOOL, APP_ERR_UNSUPPORTED_VERSION, withRpcData } from '../../src/base/errors.js'
import { defineResourceTemplate } from '../../src/tool-api/define-resource.js'
import { initializedSession, testEngine } from '../helpers/engine.js'

t.test('our protocol constants equal the SDK\'s (restated only to keep zod off the stdio start path)', async (t) => {
  t.equal(LATEST_PROTOCOL_VERSION, sdk.LATEST_PROTOCOL_VERSION)
  t.strictSame(SUPPORTED_PROTOCOL_VERSIONS, sdk.SUPPORTED_PROTOCOL_VERSIONS)
  t.equal(RPC_ERROR.ParseError, sdk.ErrorCode.ParseError)
  t.equal(RPC_ERROR.InvalidRequest, sdk.ErrorCode.InvalidRequest)
  t.equal(RPC_ERROR.MethodNotFound, sdk.ErrorCode.MethodNotFound)
  t.equal(RPC_ERROR.InvalidParams, sdk.ErrorCode.InvalidParams)
  t.equal(RPC_ERROR.InternalError, sdk.ErrorCode.InternalError)
})

t.test('toRpcError maps known codes and hides everything else behind -32603', async (t) => {
  t.strictSame(toRpcError(new APP_ERR_UNKNOWN_TOOL('x')), { code: -32602, message: 'Unknown tool: x' })
  t.strictSame(toRpcError(new Error('/secret/path leaked')), { code: -32603, message: 'Internal error' })
  t.strictSame(toRpcError(undefined), { code: -32603, message: 'Internal error' })
  t.strictSame(toRpcError(Object.assign(new Error('boom'), { statusCode: 500 })), { code: -32603, message: 'Internal error' }, 'a server fault stays hidden')
})

t.test('toRpcError: a malformed escape is invalid params; a client\'s HTTP error a transport error; the era decides a missing resource', async (t) => {
  let uriError: unknown
  try { decodeURIComponent('%E0%A4%A') } catch (err) { uriError = err }
  t.strictSame(toRpcError(uriError), { code: -32602, message: 'Invalid params: URI malformed' })
  t.strictSame(toRpcError(Object.assign(new Error('Too many requests'), { statusCode: 429, code: 'SOMETHING_ELSE' })), { code: -32000, message: 'Too many requests' })
  t.strictSame(toRpcError(new APP_ERR_SHUTTING_DOWN()), { code: -32000, message: 'Server is shutting down; retry on another instance' }, '503 is the client\'s cue to go elsewhere')
  t.strictSame(toRpcError(new APP_ERR_SESSION_NOT_FOUND()), { code: -32001, message: 'Session not found' })
  const missing = withRpcData(new APP_ERR_RESOURCE_NOT_FOUND('test://x'), { uri: 'test://x' })
  t.match(toRpcError(missing), { code: -32002, data: { uri: 'test://x' } })
  t.match(toRpcError(missing, { modern: true }), { code: -32602, data: { uri: 'test://x' } }, 'SEP-2164')
  for (const [err, code] of [[new APP_ERR_HEADER_MISMATCH('x'), -32020], [new APP_ERR_MISSING_CLIENT_CAPABILITY('sampling'), -32021], [new APP_ERR_UNSUPPORTED_VERSION('v9'), -32022]] as const) {
    t.equal(toRpcError(err).code, code, err.code)
  }
})

t.test('a resource URI with a malformed escape: invalid params, and no error in the log', async (t) => {
  const engine = testEngine({ resourceTemplates: [defineResourceTemplate({ uriTemplate: 'test://item/{name}', name: 'item', read: (uri) => [{ uri, text: 'x' }] })] })
  const { call } = await initializedSession(engine)
  t.match(await call('resources/read', { uri: 'test://item/%E0%A4%A' }), { error: { code: -32602, message: /URI malformed/ } })
  t.same(engine.lines.filter(line => (line.level as number) >= 50), [])
})
