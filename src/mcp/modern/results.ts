import { META } from '../era.js'
import { TASKS_EXTENSION } from '../tasks/tasks.js'

const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel'])
const TASKS_NEEDED = { extensions: { [TASKS_EXTENSION]: {} } }
import type { Registry } from '../registry/registry.js'
import { resultJson, resultMessage, type RequestId } from '../wire/rpc.js'

/** How long clients may cache results, and with whom they may share them (spec 2026-07-28 caching). */
export interface CacheHints {
  /** tools/list, prompts/list, resources/list, resources/templates/list and server/discover: the same for every caller (`public`). Default 300000. */
  listTtlMs?: number
  /** resources/read (`private`: contents may be the caller's). Default 0. */
  readTtlMs?: number
}

/** What the modern era shares across requests: capabilities, result decoration and the per-method checks. */
export interface ModernShared {
  capabilities: Record<string, unknown>
  /** Methods 2026-07-28 removed (their -32601 says so). */
  removed: ReadonlySet<string>
  reply(id: RequestId, method: string, result: object): string
  replyJson(id: RequestId, method: string, json: string): string
  /** The client capabilities a request needs and its envelope did not declare, or undefined. */
  missingCapabilities(method: string, params: Record<string, unknown>, declared: Record<string, unknown>): Record<string, object> | undefined
}

const LISTS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'server/discover']

/** Builds the modern era's shared part for one server. */
export function createModernShared (registry: Registry, info: { name: string, version: string }, legacyCapabilities: Record<string, unknown>, cache: CacheHints = {}): ModernShared {
  const { listTtlMs = 300_000, readTtlMs = 0 } = cache
  // resources/subscribe and logging/setLevel are gone: a modern client learns neither from discover.
  // Tasks are the io.modelcontextprotocol/tasks extension in 2026-07-28, never the 2025 capabilities.tasks slot.
  const { resources, logging: _logging, tasks, ...rest } = legacyCapabilities as { resources?: object, logging?: object, tasks?: object }
  const capabilities: Record<string, unknown> = { ...rest, logging: {} }
  if (tasks !== undefined) capabilities.extensions = { [TASKS_EXTENSION]: {} }
  if (resources !== undefined) capabilities.resources = { listChanged: false }
  // Name and version only: it rides on every result, and the title adds bytes to each without telling a client more.
  const identity = { [META.serverInfo]: { name: info.name, version: info.version } }
  const hints = new Map<string, { ttlMs: number, cacheScope: 'public' | 'private' }>(LISTS.map(m => [m, { ttlMs: listTtlMs, cacheScope: 'public' }]))
  hints.set('resources/read', { ttlMs: readTtlMs, cacheScope: 'private' })
  // Cached pages are spliced, not re-parsed: the tail each method's results end with.
  const tails = new Map<string, string>()
  const tailOf = (method: string): string => {
    let tail = tails.get(method)
    if (tail === undefined) {
      const fields = JSON.stringify({ resultType: 'complete', ...hints.get(method), _meta: identity })
      tail = fields.slice(1)
      tails.set(method, tail)
    }
    return tail
  }
  return {
    capabilities,
    removed: new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'tasks/result', 'tasks/list']),
    reply (id, method, result) {
      const { _meta: meta, resultType } = result as { _meta?: object, resultType?: string }
      // The common case, a result with neither field of its own (every tool result): serialized as in
      // 2025 and the fields spliced on, instead of copying the object (a third of a 2026 call's CPU).
      if (meta === undefined && resultType === undefined) {
        // Every 2026 result has a field of its own (content, contents, messages, completion …), so never `{}`.
        return resultJson(id, `${JSON.stringify(result).slice(0, -1)},${tailOf(method)}`)
      }
      const { _meta: _ignored, resultType: _type, ...body } = result as { _meta?: object, resultType?: string }
      return resultMessage(id, { ...body, resultType: resultType ?? 'complete', ...hints.get(method), _meta: { ...meta, ...identity } })
    },
    replyJson (id, method, json) {
      // Every cached page is a non-empty object without resultType or _meta of its own (the lists).
      return resultJson(id, `${json.slice(0, -1)},${tailOf(method)}`)
    },
    missingCapabilities (method, params, declared) {
      // The task methods, and a tool that only runs as a task, need the client to take tasks.
      const takesTasks = (declared.extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION] !== undefined
      if (!takesTasks && (TASK_METHODS.has(method) || (method === 'tools/call' && typeof params.name === 'string' && registry.tool(params.name)?.definition.task?.support === 'required'))) return TASKS_NEEDED
      if (method !== 'tools/call' || typeof params.name !== 'string') return undefined
      const needed = registry.tool(params.name)?.definition.clientCapabilities
      if (needed === undefined) return undefined
      const missing = Object.keys(needed).filter(name => declared[name] === undefined)
      return missing.length === 0 ? undefined : Object.fromEntries(missing.map(name => [name, needed[name]]))
    }
  }
}
