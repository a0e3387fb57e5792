import t from 'tap'
import * as sdk from '@modelcontextprotocol/sdk/types.js'
import { LATEST_PROTOCOL_VERSION, RPC_ERROR, SUPPORTED_PROTOCOL_VERSIONS, toRpcError } from '../../src/mcp/rpc.js'
import { APP_ERR_UNKNOWN_TOOL } from '../../src/errors.js'

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
})
