import type { RequestId } from '@modelcontextprotocol/sdk/types.js'

// The SDK's own values (types.js), restated so stdio never loads zod at startup;
// test/mcp/rpc.test.ts asserts they stay equal to the SDK's.
/** Newest protocol revision we speak. */
export const LATEST_PROTOCOL_VERSION = '2025-11-25'
/** Every revision we accept, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']
/** MCP log levels, lowest first (spec server/utilities/logging). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']
/** JSON-RPC / MCP error numbers (SDK ErrorCode, and those protocol 2026-07-28 adds). */
export const RPC_ERROR = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** A transport error with no JSON-RPC meaning of its own (the SDK's convention). */
  TransportError: -32000,
  /** An unknown or expired session (the SDK's convention). */
  SessionNotFound: -32001,
  ResourceNotFound: -32002,
  HeaderMismatch: -32020,
  MissingClientCapability: -32021,
  UnsupportedProtocolVersion: -32022
} as const

export type { RequestId }

/** The one translator from error codes to JSON-RPC numbers: nowhere else is a number chosen. */
const RPC_CODES: Record<string, number> = {
  APP_ERR_PARSE: RPC_ERROR.ParseError,
  APP_ERR_INVALID_REQUEST: RPC_ERROR.InvalidRequest,
  APP_ERR_NOT_INITIALIZED: RPC_ERROR.InvalidRequest,
  APP_ERR_UNKNOWN_METHOD: RPC_ERROR.MethodNotFound,
  // spec 2025-11-25 server/tools: an unknown tool is a protocol error, -32602
  APP_ERR_UNKNOWN_TOOL: RPC_ERROR.InvalidParams,
  APP_ERR_INVALID_PARAMS: RPC_ERROR.InvalidParams,
  APP_ERR_RESOURCE_NOT_FOUND: RPC_ERROR.ResourceNotFound,
  APP_ERR_SESSION_NOT_FOUND: RPC_ERROR.SessionNotFound,
  APP_ERR_HEADER_MISMATCH: RPC_ERROR.HeaderMismatch,
  APP_ERR_MISSING_CLIENT_CAPABILITY: RPC_ERROR.MissingClientCapability,
  APP_ERR_UNSUPPORTED_VERSION: RPC_ERROR.UnsupportedProtocolVersion,
  // What HTTP refuses of a body: its media type, its length (the engine parses JSON itself: APP_ERR_PARSE).
  APP_ERR_UNSUPPORTED_MEDIA_TYPE: RPC_ERROR.InvalidRequest,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: RPC_ERROR.InvalidRequest,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: RPC_ERROR.InvalidRequest
}

/** Which protocol era answers: 2026-07-28 (SEP-2164) reports a resource not found as invalid params. */
export interface RpcErrorOptions { modern?: boolean }

/**
 * Maps an error to a JSON-RPC error object (with the `rpcData` it carries for the client). A malformed
 * percent-escape (URIError) is the client's invalid params; any other error an HTTP client caused (a 4xx
 * status, or 503) is a transport error; the rest become a generic -32603 whose details stay in the log.
 */
export function toRpcError (err: unknown, options: RpcErrorOptions = {}): { code: number, message: string, data?: unknown } {
  if (err instanceof URIError) return { code: RPC_ERROR.InvalidParams, message: `Invalid params: ${err.message}` }
  const { code, statusCode, rpcData, message } = (err ?? {}) as { code?: unknown, statusCode?: unknown, rpcData?: unknown, message?: unknown }
  let rpc = typeof code === 'string' ? RPC_CODES[code] : undefined
  if (rpc === undefined) {
    const clientError = typeof statusCode === 'number' && ((statusCode >= 400 && statusCode < 500) || statusCode === 503)
    return clientError ? { code: RPC_ERROR.TransportError, message: String(message) } : { code: RPC_ERROR.InternalError, message: 'Internal error' }
  }
  if (options.modern === true && rpc === RPC_ERROR.ResourceNotFound) rpc = RPC_ERROR.InvalidParams
  return rpcData === undefined ? { code: rpc, message: String(message) } : { code: rpc, message: String(message), data: rpcData }
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
