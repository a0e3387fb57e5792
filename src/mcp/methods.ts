import { APP_ERR_INVALID_PARAMS } from '../base/errors.js'
import type { ToolInput } from '../tool-api/define-tool.js'
import type { ResourceContext } from '../tool-api/define-resource.js'
import { withRounds } from './call/input-required.js'
import type { Era, Handler, LegacyScope, MethodCall, ModernScope, Params, Scope } from './method-types.js'
import { answerToolCall } from './call/tool-call.js'
import { legacyCancel, legacyGet, legacyList, legacyResult, modernCancel, modernGet, modernUpdate } from './tasks/task-methods.js'

/** Every era the engine serves. */
export const ERAS: readonly Era[] = ['legacy', 'modern']

/** A method: the eras it exists in, its handler (typed by the scope those eras give it), and whether it precedes initialize. */
export type MethodEntry =
  | { eras: readonly ['legacy'], beforeInitialize?: true, handle: Handler<LegacyScope> }
  | { eras: readonly ['modern'], handle: Handler<ModernScope> }
  | { eras: readonly ['legacy', 'modern'], handle: Handler }

function cursorOf (params: Params): string | undefined {
  const cursor = params.cursor
  if (cursor === undefined || cursor === null) return undefined
  if (typeof cursor !== 'string') throw new APP_ERR_INVALID_PARAMS("'cursor' must be a string")
  return cursor
}

/** What resource, prompt and completion readers get: the services and a signal that aborts when the connection closes. */
const readerContext = (scope: Scope, input?: ToolInput, services = scope.shared.registry.services): ResourceContext & { input?: ToolInput } => ({ services, input, get signal () { return scope.closedSignal } })

/** completion/complete over what the session's client roots leave visible: path completions name nothing else. */
async function complete ({ id, method, params, channel, scope }: MethodCall): Promise<string> {
  const visible = await scope.visibleServices?.(channel?.send ?? scope.send)
  return scope.reply(id, method, await scope.shared.features.complete(params, readerContext(scope, undefined, visible)))
}

/** prompts/get through its input rounds (a 2025 client is asked with server→client requests). */
const getPrompt = ({ params, scope, input }: MethodCall): Promise<object> =>
  withRounds(scope.era, (method, p) => scope.request(method, p, scope.closedSignal, scope.send), (round) => scope.shared.features.getPrompt(params, readerContext(scope, round)), input)

const empty = ({ id, method, scope }: MethodCall): string => scope.replyJson(id, method, '{}')

// Nothing changes for this server to announce, so a subscription only needs a resource that exists.
const subscription = (call: MethodCall<LegacyScope>): string => {
  call.scope.shared.features.assertResource(call.params)
  return empty(call)
}

const legacy = (handle: Handler<LegacyScope>, beforeInitialize?: true): MethodEntry => ({ eras: ['legacy'], handle, ...(beforeInitialize ? { beforeInitialize } : {}) })
const modern = (handle: Handler<ModernScope>): MethodEntry => ({ eras: ['modern'], handle })
const both = (handle: Handler): MethodEntry => ({ eras: ['legacy', 'modern'], handle })

/** Every method the engine answers, by name, with the eras it exists in. */
export const METHODS: Readonly<Record<string, MethodEntry>> = {
  initialize: legacy(({ id, method, params, scope }) => scope.reply(id, method, scope.initialize(params)), true),
  ping: legacy(empty, true),
  'server/discover': modern(({ id, method, scope }) => scope.reply(id, method, scope.discover())),
  'subscriptions/listen': modern(({ id, params, channel, scope }) => scope.listen(id, params, channel)),
  'tools/list': both(({ id, method, params, scope }) => scope.replyJson(id, method, scope.shared.registry.toolsListPage(cursorOf(params)))),
  'tools/call': both(({ id, params, channel, scope, input }) => answerToolCall(scope, id, params, channel, input)),
  'resources/list': both(({ id, method, scope }) => scope.replyJson(id, method, scope.shared.features.resourcesList())),
  'resources/templates/list': both(({ id, method, scope }) => scope.replyJson(id, method, scope.shared.features.templatesList())),
  'resources/read': both(async ({ id, method, params, scope }) => scope.reply(id, method, await scope.shared.features.readResource(params, readerContext(scope)))),
  'resources/subscribe': legacy(subscription),
  'resources/unsubscribe': legacy(subscription),
  'prompts/list': both(({ id, method, scope }) => scope.replyJson(id, method, scope.shared.features.promptsList())),
  'prompts/get': both(async (call) => call.scope.reply(call.id, call.method, await getPrompt(call))),
  'completion/complete': both(complete),
  'logging/setLevel': legacy((call) => { call.scope.setLogLevel(call.params.level); return empty(call) }),
  // Tasks: 2025-11-25 names five methods; 2026-07-28 (SEP-2663) keeps get and cancel, adds update, drops result and list.
  'tasks/get': { eras: ['legacy', 'modern'], handle: async (call: MethodCall) => call.scope.era === 'legacy' ? await legacyGet(call as MethodCall<LegacyScope>) : await modernGet(call as MethodCall<ModernScope>) },
  'tasks/cancel': { eras: ['legacy', 'modern'], handle: async (call: MethodCall) => call.scope.era === 'legacy' ? await legacyCancel(call as MethodCall<LegacyScope>) : await modernCancel(call as MethodCall<ModernScope>) },
  'tasks/result': legacy(legacyResult),
  'tasks/list': legacy(legacyList),
  'tasks/update': modern(modernUpdate)
}

/** The scope each era's handlers receive. */
interface ScopeOf { legacy: LegacyScope, modern: ModernScope }

/** The methods one era serves, by name (a Map: a request for `constructor` or `__proto__` is simply unknown). */
export function methodsOf<E extends Era> (era: E): ReadonlyMap<string, { beforeInitialize?: true, handle: Handler<ScopeOf[E]> }> {
  // Each entry's handler takes the scope of every era it lists, so filtering by era keeps the types true.
  return new Map(Object.entries(METHODS).filter(([, entry]) => (entry.eras as readonly Era[]).includes(era))) as Map<string, { handle: Handler<ScopeOf[E]> }>
}
