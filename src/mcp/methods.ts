import { APP_ERR_INVALID_PARAMS } from '../errors.js'
import type { ResourceContext } from '../tools/define-resource.js'
import type { RequestChannel } from './channel.js'
import { resultJson, resultMessage, type RequestId } from './rpc.js'
import type { Session } from './session.js'
import { answerToolCall } from './tool-call.js'

/** A protocol era: `legacy` is initialize and sessions (2024-11-05 … 2025-11-25). */
export type Era = 'legacy'

/** Every era the engine serves. */
export const ERAS: readonly Era[] = ['legacy']

type Params = Record<string, unknown>

/** One request as a method handler receives it. */
export interface MethodCall {
  id: RequestId
  params: Params
  channel: RequestChannel | undefined
  /** The connection it arrived on, with its negotiated state. */
  session: Session
}

/** A method: the eras it exists in and its handler (a serialized response, or undefined when none is due). */
export interface MethodEntry {
  eras: readonly Era[]
  /** Answered before initialize (spec lifecycle: initialize itself and ping). */
  beforeInitialize?: true
  handle(call: MethodCall): string | undefined | Promise<string | undefined>
}

function cursorOf (params: Params): string | undefined {
  const cursor = params.cursor
  if (cursor === undefined || cursor === null) return undefined
  if (typeof cursor !== 'string') throw new APP_ERR_INVALID_PARAMS("'cursor' must be a string")
  return cursor
}

/** What resource, prompt and completion readers get: the services and a signal that aborts when the session closes. */
const readerContext = (session: Session): ResourceContext => ({ services: session.shared.registry.services, get signal () { return session.closedSignal } })

const empty = ({ id }: MethodCall): string => resultJson(id, '{}')

// Nothing changes for this server to announce, so a subscription only needs a resource that exists.
const subscription = (call: MethodCall): string => {
  call.session.shared.features.assertResource(call.params)
  return empty(call)
}

/** Every method the engine answers, by name. */
export const METHODS: Readonly<Record<string, MethodEntry>> = {
  initialize: { eras: ['legacy'], beforeInitialize: true, handle: ({ id, params, session }) => resultMessage(id, session.initialize(params)) },
  ping: { eras: ['legacy'], beforeInitialize: true, handle: empty },
  'tools/list': { eras: ERAS, handle: ({ id, params, session }) => resultJson(id, session.shared.registry.toolsListPage(cursorOf(params))) },
  'tools/call': { eras: ERAS, handle: ({ id, params, channel, session }) => answerToolCall(session, id, params, channel) },
  'resources/list': { eras: ERAS, handle: ({ id, session }) => resultJson(id, session.shared.features.resourcesList()) },
  'resources/templates/list': { eras: ERAS, handle: ({ id, session }) => resultJson(id, session.shared.features.templatesList()) },
  'resources/read': { eras: ERAS, handle: async ({ id, params, session }) => resultMessage(id, await session.shared.features.readResource(params, readerContext(session))) },
  'resources/subscribe': { eras: ['legacy'], handle: subscription },
  'resources/unsubscribe': { eras: ['legacy'], handle: subscription },
  'prompts/list': { eras: ERAS, handle: ({ id, session }) => resultJson(id, session.shared.features.promptsList()) },
  'prompts/get': { eras: ERAS, handle: async ({ id, params, session }) => resultMessage(id, await session.shared.features.getPrompt(params, readerContext(session))) },
  'completion/complete': { eras: ERAS, handle: async ({ id, params, session }) => resultMessage(id, await session.shared.features.complete(params, readerContext(session))) },
  'logging/setLevel': { eras: ['legacy'], handle: (call) => { call.session.setLogLevel(call.params.level); return empty(call) } }
}

/** The methods one era serves, by name (a Map: a request for `constructor` or `__proto__` is simply unknown). */
export function methodsOf (era: Era): ReadonlyMap<string, MethodEntry> {
  return new Map(Object.entries(METHODS).filter(([, entry]) => entry.eras.includes(era)))
}
