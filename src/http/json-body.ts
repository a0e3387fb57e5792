import type { FastifyInstance } from 'fastify'
import { APP_ERR_UNSUPPORTED_MEDIA_TYPE } from '../base/errors.js'
import { parseMessage } from '../mcp/wire/wire.js'

/** The `charset` parameter of a Content-Type value, lower-cased and unquoted, or undefined when there is none. */
export function charsetOf (contentType: string): string | undefined {
  for (const parameter of contentType.split(';').slice(1)) {
    const eq = parameter.indexOf('=')
    if (eq === -1 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue
    return parameter.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase()
  }
  return undefined
}

/**
 * Makes the engine's parser the context's JSON parser: the same bytes get the same answer as over stdio
 * (prototype-poisoning keys included). bodyLimit still applies; the body arrives decoded as UTF-8 (as
 * Buffer.toString would decode it, split characters included), one copy fewer than a Buffer. A charset
 * other than UTF-8 is refused with 415 (RFC 8259 §8.1), never read as UTF-8 and answered.
 */
export function useMessageParser (app: FastifyInstance): void {
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // Only a POST carries a message; a DELETE sent with the common headers has no body to parse.
    if (request.method !== 'POST') {
      done(null, undefined)
      return
    }
    // This parser runs only for a Content-Type naming application/json, so the header is there.
    const charset = charsetOf(request.headers['content-type'] as string)
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new APP_ERR_UNSUPPORTED_MEDIA_TYPE(`a JSON body is UTF-8, not '${charset.slice(0, 40)}'; send Content-Type: application/json`), undefined)
      return
    }
    const parsed = parseMessage(body as string)
    if (parsed.ok) done(null, parsed.message)
    else done(parsed.error as Error & { statusCode: number }, undefined)
  })
}
