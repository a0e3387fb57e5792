import fp from 'fastify-plugin'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { APP_ERR_NOT_FOUND } from '../base/errors.js'
import { errorMessage, toRpcError } from '../mcp/wire/rpc.js'
import { tooLargeError } from '../mcp/wire/wire.js'

/** Serializes the body every HTTP error carries: a JSON-RPC error with `id: null` (spec basic/transports), by the engine's writer. */
export function rpcErrorBody (error: { code: number, message: string, data?: unknown }): string {
  return errorMessage(null, error)
}

/** Maps any error thrown during a request to its HTTP status and JSON-RPC error (chosen by toRpcError, as the engine's are). */
export function toHttpError (err: FastifyError): { status: number, error: { code: number, message: string, data?: unknown } } {
  const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
  // Same answer as an over-long stdio line.
  return { status, error: toRpcError(err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? tooLargeError() : err) }
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any route or hook (a path whose %XX escapes
 * do not decode) gets the same JSON-RPC-shaped body as every other HTTP error.
 */
export function frameworkErrors (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { status, error } = toHttpError(err)
  request.log.debug({ code: err.code, status, reqId: request.id }, 'request rejected')
  reply.code(status).type('application/json').send(rpcErrorBody(error))
}

/** Error and 404 handlers that give every HTTP error a JSON-RPC-shaped body, Fastify's own included. */
const rpcErrors: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const { status, error } = toHttpError(err)
    if (status >= 500 && status !== 503) request.log.error({ err, reqId: request.id }, 'request failed')
    else request.log.debug({ code: err.code, status, reqId: request.id }, 'request rejected')
    const headers = (err as { headers?: Record<string, string> }).headers
    if (headers !== undefined) reply.headers(headers)
    return reply.code(status).type('application/json').send(rpcErrorBody(error))
  })

  app.setNotFoundHandler((request, reply) => {
    return reply.code(404).type('application/json').send(rpcErrorBody(toRpcError(new APP_ERR_NOT_FOUND(`${request.method} ${request.url.slice(0, 200)}`))))
  })
}

export default fp(rpcErrors, { name: 'rpc-errors', fastify: '5.x' })
