import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { APP_ERR_BAD_REQUEST_TARGET } from '../base/errors.js'

// RFC 3986 §3.3 pchar; a path is '/'-separated segments of them, a query adds '/' and '?'.
const PCHAR = "[A-Za-z0-9\\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2}"
// Each repetition starts at a '/', which PCHAR never matches: the match is linear in the length.
const ORIGIN_FORM = new RegExp(`^(?:/(?:${PCHAR})*)+(?:\\?(?:${PCHAR}|[/?])*)?$`)
// RFC 9112 §3.2.2; userinfo is refused (RFC 9110 §4.2.4: a recipient SHOULD treat it as an error).
const ABSOLUTE_FORM = /^https?:\/\/([^/?#@]+)([/?][^#]*)?$/i
const ENCODED_SEPARATOR = /%(?:2f|5c)/i
const ENCODED_CONTROL = /%(?:[01][0-9a-f]|7f)/i

/**
 * Why `target` is not a request target this server serves, or undefined when it is one: RFC 9112 §3.2.1
 * origin-form of RFC 3986 characters (so no fragment, no raw space or non-ASCII byte), with no encoded
 * slash or backslash, no encoded control character, no dot segment (plain or encoded) and percent-escapes
 * that decode to UTF-8. The router decodes what it routes, so anything it could read two ways is refused.
 */
export function requestTargetProblem (target: string): string | undefined {
  if (target === '*') return 'the asterisk form is not served; send OPTIONS to the endpoint itself'
  if (!target.startsWith('/')) return 'a request target starts with "/" (origin form) or "http(s)://" (absolute form, without userinfo)'
  if (target.includes('#')) return 'a request target carries no fragment ("#")'
  if (!ORIGIN_FORM.test(target)) return 'a request target holds only RFC 3986 characters and %XX escapes'
  const query = target.indexOf('?')
  const path = query === -1 ? target : target.slice(0, query)
  if (ENCODED_SEPARATOR.test(path)) return 'an encoded "/" or "\\" is not allowed in the path'
  if (ENCODED_CONTROL.test(path)) return 'an encoded control character is not allowed in the path'
  let decoded: string
  try {
    decoded = decodeURIComponent(path)
  } catch {
    return 'the path\'s %XX escapes do not decode to UTF-8'
  }
  for (const segment of decoded.split('/')) {
    if (segment === '.' || segment === '..') return 'dot segments ("." and "..") are not allowed in the path'
  }
  return undefined
}

/**
 * Fastify's `rewriteUrl`: an absolute-form target (RFC 9112 §3.2.2, which a server must accept) becomes
 * origin-form, and its authority replaces the Host header, as the RFC says (§3.2.2: the received Host is
 * ignored) — so the Host check judges the authority that was asked for. Anything else is left as it came.
 */
export function toOriginForm (req: IncomingMessage): string {
  const url = req.url ?? ''
  if (url.startsWith('/')) return url
  const absolute = ABSOLUTE_FORM.exec(url)
  if (absolute === null) return url
  req.headers.host = absolute[1]
  const rest = absolute[2] ?? '/'
  return rest.startsWith('?') ? `/${rest}` : rest
}

/** Refuses, with 400 and before any route runs, every request whose target requestTargetProblem() rejects. */
const requestTarget: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', (request, _reply, done) => {
    const problem = requestTargetProblem(request.url)
    done(problem === undefined ? undefined : new APP_ERR_BAD_REQUEST_TARGET(problem))
  })
}

export default fp(requestTarget, { name: 'request-target', fastify: '5.x', dependencies: ['rpc-errors'] })
