import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import { APP_ERR_AUTH_UNAVAILABLE } from '../base/errors.js'
import type { Degradations } from '../services/degradations.js'

/** Options of an issuer's key set fetched from its JWKS URL. */
export interface RemoteKeySetOptions {
  url: URL
  /** Longest wait for the key set, ms. Default 5000. */
  timeoutMs?: number
  /** After a fetch, how long a token naming an unknown key waits before the set is fetched again, ms. Default 30000. */
  cooldownMs?: number
  /** After a failed fetch, how long no other is tried, ms (tokens meanwhile answer 503 at once). Default 5000. */
  retryMs?: number
  /** Where an outage is reported (component `auth-keys`) when it starts, and its end. */
  degradations?: Pick<Degradations, 'report' | 'recover'>
}

// What the key set's fetch raises (the network, a non-200 answer, a body that is not a key set, a timeout), as
// against what a token raises (no key matches its kid, an algorithm the key cannot do): jose's generic error is
// the fetch's; anything that is not a jose error came from fetch itself.
const FETCH_FAULTS = new Set(['ERR_JOSE_GENERIC', 'ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID'])
const isFetchFault = (err: unknown): boolean => !(err instanceof joseErrors.JOSEError) || FETCH_FAULTS.has(err.code)

/**
 * The key getter for jwtVerify over an issuer's JWKS URL (jose's remote set: cached, refetched for an unknown
 * kid at most once per cooldown), made to tell an outage from a bad token. When the set cannot be fetched a
 * token can be neither accepted nor refused, so it gets APP_ERR_AUTH_UNAVAILABLE (503, Retry-After: when the
 * next fetch is tried) instead of a 401 that would send its client for a new token it does not need. The
 * outage is reported once when it starts and once when a fetch works again; meanwhile nothing is fetched
 * until `retryMs` has passed — tokens naming unknown keys cannot make every request a fetch of the issuer —
 * and keys from the last set fetched keep verifying while jose still holds it fresh.
 */
export function remoteKeySet (options: RemoteKeySetOptions): JWTVerifyGetKey {
  const { url, timeoutMs = 5000, cooldownMs = 30_000, retryMs = 5000, degradations } = options
  const remote = createRemoteJWKSet(url, { timeoutDuration: timeoutMs, cooldownDuration: cooldownMs })
  const reason = `the key set at ${url.href} cannot be fetched: JWTs whose key it last listed still verify, the others answer 503`
  let outage: { retryAt: number, known?: JWTVerifyGetKey } | undefined

  const unavailable = (retryAt: number): Error => Object.assign(new APP_ERR_AUTH_UNAVAILABLE(), {
    headers: { 'retry-after': String(Math.max(1, Math.ceil((retryAt - Date.now()) / 1000))) }
  })
  const failed = (err: unknown): number => {
    outage = { retryAt: Date.now() + retryMs }
    degradations?.report('auth-keys', reason, err)
    return outage.retryAt
  }

  return async (header, token) => {
    if (outage !== undefined && Date.now() >= outage.retryAt) {
      try {
        await remote.reload()
        outage = undefined
        degradations?.recover('auth-keys')
      } catch (err) {
        failed(err)
      }
    }
    if (outage !== undefined) {
      // Nothing is fetched until the retry: a key the last set listed still verifies (jose's fresh cache).
      if (!remote.fresh) throw unavailable(outage.retryAt)
      outage.known ??= createLocalJWKSet(remote.jwks() as JSONWebKeySet)
      try {
        return await outage.known(header, token)
      } catch (err) {
        // A kid the last set did not list may be a key the issuer added since: only a fetch could tell.
        if (err instanceof joseErrors.JWKSNoMatchingKey) throw unavailable(outage.retryAt)
        throw err
      }
    }
    try {
      return await remote(header, token)
    } catch (err) {
      if (!isFetchFault(err)) throw err
      throw unavailable(failed(err))
    }
  }
}
