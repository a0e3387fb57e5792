import fp from 'fastify-plugin'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { errorMessage, RPC_ERROR, toRpcError } from '../src/mcp/rpc.js'
import { tooLargeError } from '../src/mcp/wire.js'

/** JSON-RPC code for transport errors that have no JSON-RPC meaning (the SDK's convention). */
export const RPC_TRANSPORT_ERROR = -32000
/** JSON-RPC code the SDK uses for an unknown or expired session. */
export const RPC_SESSION_NOT_FOUND = -32001

/** Serializes the body every HTTP error carries: a JSON-RPC error with `id: null` (spec basic/transports), by the engine's writer. */
export function rpcErrorBody (code: number, message: string): string {
  return errorMessage(null, { code, message })
}

// Fastify's own request errors, mapped to JSON-RPC numbers; everything else 4xx is a transport error.
// JSON bodies are parsed by the engine's parser (mcp-http), so its errors arrive as APP_ERR_PARSE.
const FASTIFY_CODES: Record<string, number> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: RPC_ERROR.InvalidRequest,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: RPC_ERROR.InvalidRequest,
  APP_ERR_UNSUPPORTED_MEDIA_TYPE: RPC_ERROR.InvalidRequest,
  APP_ERR_SESSION_NOT_FOUND: RPC_SESSION_NOT_FOUND
}

/** Maps any error thrown during a request to its HTTP status and JSON-RPC error. */
export function toHttpError (err: FastifyError): { status: number, code: number, message: string } {
  const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
  // Same answer as an over-long stdio line.
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status, ...toRpcError(tooLargeError()) }
  const known = FASTIFY_CODES[err.code]
  if (known !== undefined) return { status, code: known, message: err.message }
  const rpc = toRpcError(err)
  if (rpc.code !== RPC_ERROR.InternalError) return { status, ...rpc }
  if (status >= 500 && status !== 503) return { status, code: RPC_ERROR.InternalError, message: 'Internal error' }
  return { status, code: RPC_TRANSPORT_ERROR, message: err.message }
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any route or hook (a path whose %XX escapes
 * do not decode) gets the same JSON-RPC-shaped body as every other HTTP error.
 */
export function frameworkErrors (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { status, code, message } = toHttpError(err)
  request.log.debug({ code: err.code, status, reqId: request.id }, 'request rejected')
  reply.code(status).type('application/json').send(rpcErrorBody(code, message))
}

/** Error and 404 handlers that give every HTTP error a JSON-RPC-shaped body, Fastify's own included. */
const rpcErrors: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const { status, code, message } = toHttpError(err)
    if (status >= 500 && status !== 503) request.log.error({ err, reqId: request.id }, 'request failed')
    else request.log.debug({ code: err.code, status, reqId: request.id }, 'request rejected')
    const headers = (err as { headers?: Record<string, string> }).headers
    if (headers !== undefined) reply.headers(headers)
    return reply.code(status).type('application/json').send(rpcErrorBody(code, message))
  })

  app.setNotFoundHandler((request, reply) => {
    return reply.code(404).type('application/json').send(rpcErrorBody(RPC_TRANSPORT_ERROR, `Not Found: ${request.method} ${request.url.slice(0, 200)}`))
  })
}

export default fp(rpcErrors, { name: 'rpc-errors', fastify: '5.x' })
