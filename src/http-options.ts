import { readFileSync } from 'node:fs'
import { getHeapStatistics } from 'node:v8'
import { configEnvName, configFlagName, configLabel, type Config } from './base/config.js'
import { APP_ERR_CONFIG_INVALID } from './base/errors.js'
import type { AuthOptions, StaticToken } from './http/auth.js'

const named = configLabel

/** `name:sha256` → a static token; the digest's format is checked by the auth plugin. */
function parseToken (entry: string): StaticToken {
  const at = entry.lastIndexOf(':')
  if (at <= 0) throw new APP_ERR_CONFIG_INVALID(`${named('authTokens')}: '${entry.slice(0, 20)}…' is not name:sha256 (the token's SHA-256, never the token itself)`)
  return { name: entry.slice(0, at), sha256: entry.slice(at + 1).toLowerCase() }
}

/**
 * The auth plugin's options from the config, or undefined when no authentication is configured.
 * Throws APP_ERR_CONFIG_INVALID (exit 2) for a half-configured JWT setup.
 */
export function authOptionsOf (config: Config): AuthOptions | undefined {
  const tokens = config.authTokens.map(parseToken)
  let jwt: AuthOptions['jwt']
  if (config.jwtIssuer !== '') {
    if (config.publicUrl === '') throw new APP_ERR_CONFIG_INVALID(`${named('publicUrl')}: required with --jwt-issuer — the URL clients reach /mcp at, which every JWT must name as its audience`)
    let publicKeyPem: string | undefined
    if (config.jwtPublicKeyFile !== '') {
      try {
        publicKeyPem = readFileSync(config.jwtPublicKeyFile, 'utf8')
      } catch (err) {
        throw new APP_ERR_CONFIG_INVALID(`${named('jwtPublicKeyFile')}: cannot read ${config.jwtPublicKeyFile} (${(err as NodeJS.ErrnoException).code})`)
      }
    }
    jwt = {
      issuer: config.jwtIssuer,
      jwksUrl: config.jwtJwksUrl === '' ? undefined : config.jwtJwksUrl,
      publicKeyPem,
      algorithms: config.jwtAlgorithms.length === 0 ? undefined : config.jwtAlgorithms
    }
  }
  if (tokens.length === 0 && jwt === undefined) return undefined
  return { resource: config.publicUrl === '' ? `http://${config.host}:${config.port}/mcp` : config.publicUrl, tokens, jwt, scope: config.authScope }
}

/** Fastify's trustProxy from the config: off, a hop count, or the proxies' addresses. */
export function trustProxyOf (config: Config): boolean | number | string[] {
  const value = config.trustProxy.trim()
  if (value === '' || value === 'false') return false
  if (value === 'true') return true
  if (/^\d+$/.test(value)) return Number(value)
  return value.split(',').map(s => s.trim()).filter(s => s !== '')
}

/**
 * Why the server must not start, all at once: a non-loopback bind without authentication (unless insecureNoAuth)
 * and without the host names clients use (allowedHosts).
 */
export function checkExposure (config: Config, auth: AuthOptions | undefined, loopback: boolean): void {
  if (loopback) return
  const problems: string[] = []
  if (auth === undefined && !config.insecureNoAuth) {
    problems.push('every request must be authenticated: ' +
      `set ${configEnvName('authTokens')} (name:sha256 of each token) or ${configEnvName('jwtIssuer')} with ${configEnvName('jwtJwksUrl')} and ${configEnvName('publicUrl')}; ` +
      `or pass ${configFlagName('insecureNoAuth')} to serve without authentication`)
  }
  if (config.allowedHosts.length === 0) {
    problems.push(`${named('allowedHosts')} must list the host names clients use ('*' only behind a proxy that checks Host)`)
  }
  if (problems.length === 0) return
  throw new APP_ERR_CONFIG_INVALID(`${named('host')}: '${config.host}' is reachable from other machines, so ${problems.join('; and ')}`)
}

/**
 * The memory thresholds past which /mcp sheds load, in bytes (0: off): `maxHeapUsedPercent` of V8's heap limit
 * (what --max-old-space-size sets, or what V8 chose for the machine), and `maxRssMb`.
 */
export function memoryLimitsOf (config: Pick<Config, 'maxHeapUsedPercent' | 'maxRssMb'>, heapLimit = getHeapStatistics().heap_size_limit): { maxHeapUsedBytes: number, maxRssBytes: number } {
  return { maxHeapUsedBytes: Math.floor(heapLimit * config.maxHeapUsedPercent / 100), maxRssBytes: config.maxRssMb * 1024 * 1024 }
}
