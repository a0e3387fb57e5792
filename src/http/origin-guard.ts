import fp from 'fastify-plugin'
import type { FastifyPluginAsync, onRequestHookHandler } from 'fastify'
import { APP_ERR_HOST_FORBIDDEN, APP_ERR_ORIGIN_FORBIDDEN } from '../base/errors.js'

/** Options for the DNS-rebinding defence. */
export interface OriginGuardOptions {
  /** The address the server binds; a loopback bind also allows loopback origins. */
  host: string
  /** Extra allowed `Origin` values (`https://app.example.com`); `*` allows any. */
  allowedOrigins?: readonly string[]
  /** Extra allowed `Host` names, with or without port; `*` allows any. Required for a non-loopback bind. */
  allowedHosts?: readonly string[]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route answers whatever Host and Origin it is asked with: orchestrators probe and scrape by the
     * pod's address, not a name clients use. Set on the route itself, so every spelling the router
     * accepts for it is exempt, and nothing else is.
     */
    anyHost?: boolean
  }
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']

/** True for addresses only this machine can reach. */
export function isLoopbackHost (host: string): boolean {
  const h = host.toLowerCase()
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127(\.\d{1,3}){3}$/.test(h)
}

/** The name part of a Host header value (`[::1]:3000` → `[::1]`, `a.test:80` → `a.test`). */
function hostName (value: string): string {
  if (value.charCodeAt(0) === 91) {
    const end = value.indexOf(']')
    return end === -1 ? value : value.slice(0, end + 1)
  }
  const colon = value.indexOf(':')
  return colon === -1 ? value : value.slice(0, colon)
}

/** The `Origin` value's host name, or undefined when it is not an http(s) origin. */
function originHostName (origin: string): string | undefined {
  try {
    const url = new URL(origin)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    return url.hostname.includes(':') ? `[${url.hostname.replace(/^\[|\]$/g, '')}]` : url.hostname
  } catch {
    return undefined
  }
}

const clip = (s: string): string => s.length > 100 ? `${s.slice(0, 100)}…` : s

/** Builds the onRequest hook: a foreign Origin → 403, a Host outside the allow-list → 403 (spec basic/transports, Security Warning), except on routes marked `anyHost`. */
export function originGuard (options: OriginGuardOptions): onRequestHookHandler {
  const { host, allowedOrigins = [], allowedHosts = [] } = options
  const loopbackBind = isLoopbackHost(host)
  const anyHost = allowedHosts.includes('*')
  const anyOrigin = allowedOrigins.includes('*')
  const hosts = new Set([...LOOPBACK_NAMES, ...allowedHosts.map(h => h.toLowerCase())])
  const origins = new Set(allowedOrigins.map(o => o.toLowerCase().replace(/\/+$/, '')))
  // Last accepted values: clients repeat the same headers, so the common case is one string compare.
  let lastHost: string | undefined
  let lastOrigin: string | undefined

  const hostAllowed = (value: string | undefined): boolean => {
    if (anyHost) return true
    if (value === undefined) return false
    const lower = value.toLowerCase()
    return hosts.has(lower) || hosts.has(hostName(lower))
  }
  const originAllowed = (value: string): boolean => {
    if (anyOrigin) return true
    const lower = value.toLowerCase()
    if (origins.has(lower)) return true
    if (!loopbackBind) return false
    const name = originHostName(lower)
    return name !== undefined && LOOPBACK_NAMES.includes(name)
  }

  return function checkOrigin (request, _reply, done) {
    const headers = request.headers
    const hostHeader = headers.host
    if (hostHeader !== lastHost || hostHeader === undefined) {
      if (!hostAllowed(hostHeader)) {
        if (request.routeOptions.config.anyHost === true) return done()
        return done(new APP_ERR_HOST_FORBIDDEN(clip(hostHeader ?? '')))
      }
      lastHost = hostHeader
    }
    const origin = headers.origin
    if (origin !== undefined && origin !== lastOrigin) {
      if (!originAllowed(origin)) {
        if (request.routeOptions.config.anyHost === true) return done()
        return done(new APP_ERR_ORIGIN_FORBIDDEN(clip(origin)))
      }
      lastOrigin = origin
    }
    done()
  }
}

/** Registers originGuard() for every route of the context (app.ts refuses a non-loopback bind without allowedHosts first). */
const originGuardPlugin: FastifyPluginAsync<OriginGuardOptions> = async (app, options) => {
  app.addHook('onRequest', originGuard(options))
}

export default fp(originGuardPlugin, { name: 'origin-guard', fastify: '5.x', dependencies: ['rpc-errors'] })
