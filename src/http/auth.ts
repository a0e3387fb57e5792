import { createHash, timingSafeEqual } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, importSPKI, jwtVerify, type JWTVerifyGetKey, type KeyObject } from 'jose'
import { APP_ERR_CONFIG_INVALID, APP_ERR_INSUFFICIENT_SCOPE, APP_ERR_UNAUTHORIZED } from '../base/errors.js'
import type { Degradations } from '../services/degradations.js'
import { remoteKeySet } from './remote-key-set.js'

/** Who a request acts for: the token's subject, or the client address when the server runs without auth. */
export interface Principal {
  /** Stable key for limits and session binding: `token:<name>`, `jwt:<iss>#<sub>`, or `ip:<address>`. */
  id: string
  kind: 'token' | 'jwt' | 'anonymous'
}

/** A static bearer token, stored only as the SHA-256 of its text. */
export interface StaticToken {
  /** Who the token stands for (logged and used for limits; never the token itself). */
  name: string
  /** Lower-case hex SHA-256 of the token text (`printf %s "$TOKEN" | sha256sum`). */
  sha256: string
}

/** JWT access tokens from an OAuth authorization server. */
export interface JwtOptions {
  /** Expected `iss`; also listed as the authorization server in the resource metadata. */
  issuer: string
  /** Where the issuer publishes its signing keys. One of jwksUrl, publicKeyPem or jwks is needed. */
  jwksUrl?: string
  /** A PEM (SPKI) public key, for an issuer without a JWKS endpoint. */
  publicKeyPem?: string
  /** An inline JWKS (tests, air-gapped setups). */
  jwks?: { keys: Array<Record<string, unknown>> }
  /** Accepted signature algorithms. Default RS256, ES256, EdDSA (never `none`, never HMAC). */
  algorithms?: string[]
  /** Tolerated clock skew for exp/nbf, seconds. Default 30. */
  clockToleranceSec?: number
  /** With jwksUrl: after a fetch, how long before a token naming an unknown key fetches the set again, ms. Default 30000. */
  jwksCooldownMs?: number
  /** With jwksUrl: after a failed fetch, how long before the next is tried, ms (tokens meanwhile answer 503 at once). Default 5000. */
  jwksRetryMs?: number
}

/** Options of the auth plugin. */
export interface AuthOptions {
  /** Canonical URL of the MCP endpoint: the token audience (RFC 8707) and the metadata's `resource`. */
  resource: string
  /** Static bearer tokens (each as a hash). */
  tokens?: readonly StaticToken[]
  /** JWT verification. */
  jwt?: JwtOptions
  /** The scope every request needs. Default `workspace:read`. */
  scope?: string
  /** Where a key set that cannot be fetched is reported (component `auth-keys`), and its recovery. */
  degradations?: Pick<Degradations, 'report' | 'recover'>
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth plugin on the routes it protects (or the client address without auth). */
    principal?: Principal
  }
}

/** The default scope a token must carry. */
export const DEFAULT_SCOPE = 'workspace:read'
const METADATA_PATH = '/.well-known/oauth-protected-resource'
const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA']

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest()

/** Checks a presented token against every configured digest, in constant time per entry, without an early exit. */
function staticMatch (tokens: ReadonlyArray<{ name: string, digest: Buffer }>, presented: string): string | undefined {
  const digest = sha256(presented)
  let found: string | undefined
  for (const token of tokens) if (timingSafeEqual(token.digest, digest) && found === undefined) found = token.name
  return found
}

/** The scopes a JWT grants: `scope` (space-separated, RFC 9068) or `scp` (an array or a string). */
function scopesOf (payload: Record<string, unknown>): Set<string> {
  const raw = payload.scope ?? payload.scp
  if (Array.isArray(raw)) return new Set(raw.filter((s): s is string => typeof s === 'string'))
  return new Set(typeof raw === 'string' ? raw.split(' ').filter(s => s !== '') : [])
}

const looksLikeJwt = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token)

/** The metadata URL for the endpoint at `resource` (path-inserted form, RFC 9728 §3.1). */
export function metadataUrl (resource: string): string {
  const url = new URL(resource)
  return `${url.origin}${METADATA_PATH}${url.pathname === '/' ? '' : url.pathname}`
}

async function keyResolver (jwt: JwtOptions, degradations: AuthOptions['degradations']): Promise<JWTVerifyGetKey | KeyObject | Uint8Array> {
  if (jwt.jwksUrl !== undefined) return remoteKeySet({ url: new URL(jwt.jwksUrl), cooldownMs: jwt.jwksCooldownMs, retryMs: jwt.jwksRetryMs, degradations })
  if (jwt.jwks !== undefined) return createLocalJWKSet(jwt.jwks as Parameters<typeof createLocalJWKSet>[0])
  if (jwt.publicKeyPem !== undefined) {
    // A bare key does not say which algorithm it is for (a JWK does).
    if (jwt.algorithms === undefined) throw new APP_ERR_CONFIG_INVALID('jwt: a PEM public key needs its algorithm (e.g. RS256 or ES256)')
    return await importSPKI(jwt.publicKeyPem, jwt.algorithms[0])
  }
  throw new APP_ERR_CONFIG_INVALID('jwt: set a JWKS URL, a JWKS or a PEM public key to verify tokens with')
}

/** What jose found wrong with a JWT, for the debug log: its code and sentence (jose's sentences quote no value), never the token. */
function jwtFault (err: unknown): Record<string, unknown> {
  if (!(err instanceof joseErrors.JOSEError)) return { reason: (err as Error).name }
  const claim = (err as { claim?: unknown }).claim
  return { code: err.code, reason: err.message, ...(typeof claim === 'string' ? { claim } : {}) }
}

/** The key id and algorithm a JWT names (unverified, and no secret), when its header decodes. */
function jwtHeader (token: string): Record<string, unknown> {
  try {
    const { kid, alg } = decodeProtectedHeader(token)
    return { kid, alg }
  } catch {
    return {}
  }
}

/** The RFC 9728 metadata for a JWT setup; undefined for static tokens, which have no authorization server (RFC 9728 §2). */
function metadataOf (options: AuthOptions): string | undefined {
  return options.jwt === undefined ? undefined : metadataUrl(options.resource)
}

/**
 * OAuth 2.1 resource-server checks on every route of the context it is registered in (spec 2025-11-25
 * basic/authorization): a bearer token from the Authorization header only, verified on every request —
 * a static token by its hash, or a JWT by signature, issuer, audience (this server's canonical URL) and
 * expiry — and carrying the scope. 401 and 403 carry the `WWW-Authenticate` challenge pointing at the
 * RFC 9728 metadata. The context decides what is protected, never a path string: register it where the
 * protected routes live (mcp-http's `guard`), and whatever spelling the router accepts for them, it runs.
 */
const auth: FastifyPluginAsync<AuthOptions> = async (app, options) => {
  const { resource, tokens = [], jwt, scope = DEFAULT_SCOPE, degradations } = options
  if (tokens.length === 0 && jwt === undefined) throw new APP_ERR_CONFIG_INVALID('auth: configure static tokens or a JWT issuer')
  for (const token of tokens) {
    if (!/^[0-9a-f]{64}$/.test(token.sha256)) throw new APP_ERR_CONFIG_INVALID(`auth token '${token.name}': sha256 must be 64 lower-case hex digits (printf %s "$TOKEN" | sha256sum)`)
  }
  const digests = tokens.map(t => ({ name: t.name, digest: Buffer.from(t.sha256, 'hex') }))
  const key = jwt === undefined ? undefined : await keyResolver(jwt, degradations)
  const algorithms = jwt?.algorithms ?? DEFAULT_ALGORITHMS
  const metadata = metadataOf(options)
  const challenge = (extra: string): string =>
    ['Bearer realm="workspace-mcp"', extra, `scope="${scope}"`, metadata === undefined ? '' : `resource_metadata="${metadata}"`].filter(s => s !== '').join(', ')
  // What a client without a token should send: a static-token server has no authorization server to get one from.
  const required = jwt === undefined
    ? 'a bearer token is required: send "Authorization: Bearer <token>" with a token the operator gave you (this server has no OAuth authorization server, so client registration cannot get one)'
    : `a bearer token is required: send "Authorization: Bearer <token>" with an access token from ${jwt.issuer} for ${resource} (metadata: ${metadata})`
  const unauthorized = (why: string, error?: string): Error =>
    Object.assign(new APP_ERR_UNAUTHORIZED(why), { headers: { 'www-authenticate': challenge(error === undefined ? '' : `error="${error}", error_description="${why}"`) } })

  /** Logs at debug why a token was refused (what was wrong with it, never the token) and returns the error to throw. */
  const refused = (request: FastifyRequest, err: Error, reason: Record<string, unknown>): Error => {
    request.log.debug({ reqId: request.id, ...reason }, 'token rejected')
    return err
  }

  async function verifyJwt (request: FastifyRequest, token: string): Promise<Principal> {
    let payload: Record<string, unknown>
    try {
      ({ payload } = await jwtVerify(token, key as JWTVerifyGetKey, {
        issuer: jwt?.issuer,
        audience: resource,
        algorithms,
        clockTolerance: jwt?.clockToleranceSec ?? 30,
        requiredClaims: ['sub', 'exp']
      }))
    } catch (err) {
      // The issuer's keys cannot be fetched: the token is neither good nor bad yet (503, reported as auth-keys).
      if ((err as { code?: unknown }).code === 'APP_ERR_AUTH_UNAVAILABLE') throw refused(request, err as Error, { kind: 'jwt', reason: 'the key set cannot be fetched', ...jwtHeader(token) })
      const why = err instanceof joseErrors.JWTExpired ? 'the token has expired' : 'the token is not valid for this server'
      throw refused(request, unauthorized(why, 'invalid_token'), { kind: 'jwt', ...jwtFault(err), ...jwtHeader(token) })
    }
    const principal: Principal = { id: `jwt:${String(payload.iss)}#${String(payload.sub)}`, kind: 'jwt' }
    if (!scopesOf(payload).has(scope)) {
      throw refused(request, Object.assign(new APP_ERR_INSUFFICIENT_SCOPE(scope), {
        headers: { 'www-authenticate': challenge(`error="insufficient_scope", error_description="the token lacks the ${scope} scope"`) }
      }), { kind: 'jwt', principal: principal.id, reason: `the token lacks the ${scope} scope` })
    }
    return principal
  }

  async function authenticate (request: FastifyRequest): Promise<Principal> {
    const header = request.headers.authorization
    // Tokens come only from this header (never a query string: spec basic/authorization, Token Requirements).
    const match = header === undefined ? null : /^Bearer ([\x21-\x7e]+)$/i.exec(header)
    if (match === null) {
      if (header === undefined) throw refused(request, unauthorized(required), { reason: 'no Authorization header' })
      throw refused(request, unauthorized('the Authorization header is not a bearer token', 'invalid_request'), { reason: 'the Authorization header is not "Bearer <token>"' })
    }
    const token = match[1]
    if (jwt !== undefined && looksLikeJwt(token)) return await verifyJwt(request, token)
    const name = staticMatch(digests, token)
    if (name === undefined) throw refused(request, unauthorized('the token is not valid for this server', 'invalid_token'), { kind: 'static', reason: 'no configured token has this SHA-256' })
    return { id: `token:${name}`, kind: 'token' }
  }

  app.addHook('onRequest', async (request) => {
    request.principal = await authenticate(request)
  })
}

/**
 * The RFC 9728 protected-resource metadata, at the well-known path and its path-inserted form, for a
 * JWT setup (a static-token server has no authorization server to name, so it serves none). Public:
 * register it outside the context `auth` protects.
 */
const resourceMetadataPlugin: FastifyPluginAsync<AuthOptions> = async (app, options) => {
  const metadata = metadataOf(options)
  if (metadata === undefined) return
  const document = JSON.stringify({
    resource: options.resource,
    authorization_servers: [options.jwt?.issuer],
    scopes_supported: [options.scope ?? DEFAULT_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'workspace-mcp'
  })
  const serve = (_request: FastifyRequest, reply: FastifyReply): FastifyReply => reply.type('application/json').send(document)
  app.get(METADATA_PATH, serve)
  app.get(new URL(metadata).pathname, serve)
}

/** The protected-resource metadata routes (see resourceMetadataPlugin). */
export const resourceMetadata = fp(resourceMetadataPlugin, { name: 'auth-metadata', fastify: '5.x' })

export default fp(auth, { name: 'auth', fastify: '5.x', dependencies: ['rpc-errors'] })
