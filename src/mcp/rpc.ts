import type { RequestId } from '@modelcontextprotocol/sdk/types.js'

// The SDK's own values (types.js), restated so stdio never loads zod at startup;
// test/mcp/rpc.test.ts asserts they stay equal to the SDK's.
/** Newest protocol revision we speak. */
export const LATEST_PROTOCOL_VERSION = '2025-11-25'
/** Every revision we accept, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']
/** MCP log levels, lowest first (spec server/utilities/logging). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']
/** JSON-RPC / MCP error numbers (SDK ErrorCode). */
export const RPC_ERROR = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ResourceNotFound: -32002
} as const

export type { RequestId }

/** The one translator from error codes to JSON-RPC numbers. */
const RPC_CODES: Record<string, number> = {
  APP_ERR_PARSE: RPC_ERROR.ParseError,
  APP_ERR_INVALID_REQUEST: RPC_ERROR.InvalidRequest,
  APP_ERR_NOT_INITIALIZED: RPC_ERROR.InvalidRequest,
  APP_ERR_UNKNOWN_METHOD: RPC_ERROR.MethodNotFound,
  // spec 2025-11-25 server/tools: an unknown tool is a protocol error, -32602
  APP_ERR_UNKNOWN_TOOL: RPC_ERROR.InvalidParams,
  APP_ERR_INVALID_PARAMS: RPC_ERROR.InvalidParams,
  APP_ERR_RESOURCE_NOT_FOUND: RPC_ERROR.ResourceNotFound
}

/** Maps an error to a JSON-RPC error object (with the `rpcData` it carries for the client); unknown errors become a generic -32603. */
export function toRpcError (err: unknown): { code: number, message: string, data?: unknown } {
  const code = (err as { code?: unknown })?.code
  const rpc = typeof code === 'string' ? RPC_CODES[code] : undefined
  if (rpc === undefined) return { code: RPC_ERROR.InternalError, message: 'Internal error' }
  const data = (err as { rpcData?: unknown }).rpcData
  return data === undefined ? { code: rpc, message: (err as Error).message } : { code: rpc, message: (err as Error).message, data }
}

/** Serializes a success response; `resultJson` is already JSON text (cached tools/list pages). */
export function resultJson (id: RequestId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`
}

/** Serializes a success response from an object. */
export function resultMessage (id: RequestId, result: unknown): string {
  return resultJson(id, JSON.stringify(result))
}

/** Serializes an error response (`id` null when the request's id could not be read). */
export function errorMessage (id: RequestId | null, error: { code: number, message: string, data?: unknown }): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error })
}

/** True for a string or integer id (spec: never null, never fractional). */
export function isRequestId (id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))
}
