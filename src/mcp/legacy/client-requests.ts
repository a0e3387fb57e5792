import { toolError } from '../../base/errors.js'
import type { Send } from '../wire/channel.js'
import type { RequestId } from '../wire/rpc.js'

interface Pending { resolve: (v: Record<string, unknown>) => void, reject: (e: Error) => void }

const CAPABILITY_OF: ReadonlyArray<[string, string]> = [['sampling/', 'sampling'], ['elicitation/', 'elicitation'], ['roots/', 'roots']]

/** Server→client requests of one 2025 session (sampling, elicitation, roots): ids, answers, cancellation. */
export class ClientRequests {
  private readonly pending = new Map<RequestId, Pending>()
  private nextId = 0

  /** Sends `method` on `send` and resolves with the client's result; `signal` cancels it (notifications/cancelled). */
  send (method: string, params: Record<string, unknown>, capabilities: Record<string, unknown>, signal: AbortSignal, send: Send | undefined): Promise<Record<string, unknown>> {
    const capability = CAPABILITY_OF.find(([prefix]) => method.startsWith(prefix))?.[1]
    if (capability !== undefined && capabilities[capability] === undefined) {
      return Promise.reject(toolError('CLIENT_CAPABILITY_MISSING', `the client did not declare the '${capability}' capability, so '${method}' cannot be sent`, 'use a client that supports it'))
    }
    if (send === undefined) {
      return Promise.reject(toolError('CLIENT_CAPABILITY_MISSING', `'${method}' needs a channel back to the client, which stateless HTTP does not have`, 'use stateful mode or stdio'))
    }
    // A call already aborted sends nothing (and so has nothing to cancel).
    if (signal.aborted) return Promise.reject(signal.reason)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.pending.delete(id)
        send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'request aborted' } }))
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.pending.set(id, {
        resolve: v => { signal.removeEventListener('abort', onAbort); resolve(v) },
        reject: e => { signal.removeEventListener('abort', onAbort); reject(e) }
      })
      send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
    })
  }

  /** Settles the request a client response answers; a response for no pending id is ignored. */
  settle (id: RequestId, result: unknown, error: unknown): void {
    const pending = this.pending.get(id)
    if (pending === undefined) return
    this.pending.delete(id)
    if (error !== undefined) {
      const message = String((error as { message?: unknown }).message ?? 'error')
      pending.reject(toolError('CLIENT_REQUEST_FAILED', `the client answered with an error: ${message}`))
    } else {
      pending.resolve(result as Record<string, unknown>)
    }
  }

  /** Rejects everything still waiting (the session closed). */
  rejectAll (reason: Error): void {
    for (const p of this.pending.values()) p.reject(reason)
    this.pending.clear()
  }
}
