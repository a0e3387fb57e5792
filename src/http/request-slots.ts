import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RequestPayload } from 'fastify'
import { APP_ERR_BODY_TIMEOUT, APP_ERR_OVERLOADED } from '../base/errors.js'
import { Idle } from '../mcp/idle.js'

// Why a POST holds an in-flight slot only once its body has arrived: headers that arrive and a body that never
// does cost a socket, not work, and counted from the headers 260 such POSTs filled the 256 slots and locked every
// other client out until the request timeout closed them. A cap per client would not have helped: an attacker has
// addresses enough, and the clients behind one proxy or NAT (or every local client of a loopback server) share
// one. So the body phase is bounded in time instead (bodyTimeoutMs, answered 408), and in memory by bodyLimit
// and the heap threshold that sheds /mcp before the heap runs out.

/** Options of the in-flight accounting. */
export interface RequestSlotsOptions {
  /** Most POSTs answered at once (their bodies arrived). */
  maxInflight: number
  /** Longest a body may take to arrive after its headers, ms; a later one is answered 408 and its connection closed. */
  bodyTimeoutMs: number
}

/** One POST past its headers: its body stream, when the headers arrived, and whether it holds a slot. */
interface Slot {
  payload: RequestPayload
  since: number
  answering: boolean
}

/** The POSTs an endpoint receives and answers: the hooks that count them, and the counts. */
export interface RequestSlots {
  /** Route onRequest: a POST arriving while every slot is taken gets 503 before its body is read. */
  onRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void
  /** Route preParsing: the body starts arriving; its deadline runs from now. */
  preParsing(request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (err: Error | null, payload: RequestPayload) => void): void
  /** Route preValidation: the body arrived; the POST takes a slot, or gets 503 when none is free. */
  preValidation(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void
  /** POSTs being answered now (each holds a slot). */
  readonly inflight: number
  /** POSTs whose body is still arriving (they hold no slot). */
  readonly receiving: number
  /** Resolves once no POST is answered or arriving (at once when none is): woken by the last one's end. */
  idle(): Promise<void>
  /** Stops the deadline sweep. */
  close(): void
}

/** A 503 that tells the client to come back in a second. */
const overloaded = (): Error => Object.assign(new APP_ERR_OVERLOADED(), { headers: { 'retry-after': '1' } })

/** Counts an endpoint's POSTs: from their headers while the body arrives (bounded in time), then in a slot while answered. */
export function createRequestSlots (options: RequestSlotsOptions): RequestSlots {
  const { maxInflight, bodyTimeoutMs } = options
  const arriving = new Map<IncomingMessage, Slot>()
  let inflight = 0
  const idle = new Idle(() => inflight + arriving.size > 0)

  /** Answers a body that missed its deadline: 408 through the body reader, whose error ends the request. */
  const expire = (slot: Slot): void => {
    const err = Object.assign(new APP_ERR_BODY_TIMEOUT(String(bodyTimeoutMs)), { headers: { connection: 'close' } })
    // Fastify's body reader listens for errors on the stream it reads, and answers with the error. Every body past
    // its preParsing is read at once or refused (415) at once, so a stream nobody reads is never this old; were
    // one, an 'error' without a listener would throw here, so it is closed instead.
    /* c8 ignore next 4 */
    if (slot.payload.listenerCount('error') === 0) {
      slot.payload.destroy()
      return
    }
    slot.payload.emit('error', err)
  }
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [raw, slot] of arriving) {
      if (now - slot.since <= bodyTimeoutMs) continue
      arriving.delete(raw)
      expire(slot)
      idle.ended()
    }
  }, Math.max(50, Math.min(1000, Math.floor(bodyTimeoutMs / 4))))
  sweep.unref()

  /** Releases what the request holds when its response ends (or its connection goes); true when it already ended. */
  const releaseOnClose = (raw: IncomingMessage, response: ServerResponse, slot: Slot): boolean => {
    // A client that left while an earlier hook waited (a key fetch) has no close event left to come.
    if (response.destroyed) return true
    response.once('close', () => {
      arriving.delete(raw)
      if (slot.answering) inflight--
      idle.ended()
    })
    return false
  }

  return {
    onRequest (_request, _reply, done) {
      done(inflight >= maxInflight ? overloaded() : undefined)
    },
    preParsing (request, reply, payload, done) {
      const slot: Slot = { payload, since: Date.now(), answering: false }
      if (!releaseOnClose(request.raw, reply.raw, slot)) arriving.set(request.raw, slot)
      done(null, payload)
    },
    preValidation (request, _reply, done) {
      const slot = arriving.get(request.raw)
      arriving.delete(request.raw)
      if (inflight >= maxInflight) {
        idle.ended()
        return done(overloaded())
      }
      // Without a slot here the response has already ended: nothing is left to count.
      if (slot !== undefined) {
        slot.answering = true
        inflight++
      }
      done()
    },
    get inflight () { return inflight },
    get receiving () { return arriving.size },
    idle: () => idle.wait(),
    close () { clearInterval(sweep) }
  }
}
