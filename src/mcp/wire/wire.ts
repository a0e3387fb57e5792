import { APP_ERR_INVALID_PARAMS, APP_ERR_INVALID_REQUEST, APP_ERR_PARSE } from '../../base/errors.js'
import { errorMessage, isRequestId, toRpcError, type RequestId } from './rpc.js'

// The one parser and classifier both transports use: the same bytes in give the same JSON-RPC
// answer over stdio and HTTP (the parity test sends them to both).

/** What parseMessage found: a JSON value, or the error to answer with (id null). */
export type Parsed = { ok: true, message: unknown } | { ok: false, error: Error }

/** One JSON-RPC message by kind (spec basic: requests, notifications, responses). */
export type Classified =
  | { kind: 'request', id: RequestId, method: string, params: Record<string, unknown> }
  | { kind: 'notification', method: string, params: Record<string, unknown> }
  | { kind: 'response', id: RequestId, result: unknown, error: unknown }
  | { kind: 'invalid', id: RequestId | null, error: Error }

// A key spelled `__proto__` or `constructor` anywhere in the text, raw or with \u escapes (the
// prefilter secure-json-parse uses): clean text skips the walk over the parsed value.
const U = (c: string): string => `(?:${c}|\\\\u00${c.charCodeAt(0).toString(16).replace(/[a-f]/g, h => `[${h}${h.toUpperCase()}]`)})`
const spelled = (word: string): string => [...word].map(U).join('')
const SUSPECT = new RegExp(`"(?:${spelled('__proto__')}|${spelled('constructor')})"\\s*:`)

const mayBeSuspect = (text: string): boolean => text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')

/** The error an over-long message gets on both transports (stdio line cap, HTTP bodyLimit). */
export function tooLargeError (): Error {
  return new APP_ERR_INVALID_REQUEST('the message exceeds the size limit')
}

const segment = (key: string): string => /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`

/**
 * The JSON path of the first prototype-poisoning key (`__proto__`, or `constructor.prototype`),
 * or undefined. Same rule as Fastify's default (secure-json-parse), but the answer names the key.
 */
export function findPoisonedKey (value: unknown): string | undefined {
  // Iterative: a deeply nested body must not overflow the stack.
  const stack: Array<[unknown, string]> = [[value, '']]
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string]
    if (typeof node !== 'object' || node === null) continue
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}[${i}]`])
      continue
    }
    if (Object.hasOwn(node, '__proto__')) return `${path}.__proto__`
    const ctor = (node as Record<string, unknown>).constructor
    if (Object.hasOwn(node, 'constructor') && typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) {
      return `${path}.constructor.prototype`
    }
    const keys = Object.keys(node)
    for (let i = keys.length - 1; i >= 0; i--) stack.push([(node as Record<string, unknown>)[keys[i]], path + segment(keys[i])])
  }
  return undefined
}

/** Parses one message's bytes (UTF-8, optional BOM); prototype-poisoning keys are refused, naming the key. */
export function parseMessage (input: string | Buffer): Parsed {
  let text = typeof input === 'string' ? input : input.toString('utf8')
  if (text.charCodeAt(0) === 0xFEFF) text = text.slice(1)
  if (text.trim() === '') return { ok: false, error: new APP_ERR_PARSE('the message is empty') }
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch {
    return { ok: false, error: new APP_ERR_PARSE('the message is not valid JSON') }
  }
  // indexOf is a byte scan: only a text holding one of the words, or a \u escape that could spell one, meets the regex.
  if (typeof message === 'object' && message !== null && mayBeSuspect(text) && SUSPECT.test(text)) {
    const key = findPoisonedKey(message)
    if (key !== undefined) {
      const shown = key.length > 200 ? `…${key.slice(-199)}` : key
      return { ok: false, error: new APP_ERR_PARSE(`forbidden key '${shown.replace(/^\./, '')}' (prototype poisoning)`) }
    }
  }
  return { ok: true, message }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const invalid = (error: Error, id: RequestId | null = null): Classified => ({ kind: 'invalid', id, error })

/** Sorts a parsed JSON value into request / notification / response, or invalid with the error to answer. */
export function classify (message: unknown): Classified {
  // Batching was removed in 2025-06-18.
  if (Array.isArray(message)) return invalid(new APP_ERR_INVALID_REQUEST('JSON-RPC batches are not supported'))
  if (!isObject(message) || message.jsonrpc !== '2.0') return invalid(new APP_ERR_INVALID_REQUEST('expected a JSON-RPC 2.0 object'))
  const { id, method, params } = message
  if (method !== undefined) {
    if (typeof method !== 'string') return invalid(new APP_ERR_INVALID_REQUEST('method must be a string'))
    if (id !== undefined && !isRequestId(id)) return invalid(new APP_ERR_INVALID_REQUEST('id must be a string or an integer'))
    if (params !== undefined && !isObject(params)) return invalid(new APP_ERR_INVALID_PARAMS('params must be an object'), id ?? null)
    const p = (params ?? {}) as Record<string, unknown>
    return id === undefined ? { kind: 'notification', method, params: p } : { kind: 'request', id, method, params: p }
  }
  const { result, error } = message
  if (!isRequestId(id) || (result === undefined) === (error === undefined)) {
    return invalid(new APP_ERR_INVALID_REQUEST('expected a method, or exactly one of result/error for a known id'))
  }
  if (error !== undefined && !isObject(error)) return invalid(new APP_ERR_INVALID_REQUEST('error must be an object'))
  return { kind: 'response', id, result, error }
}

/** The one serialization of a failed parse or an invalid message (HTTP error bodies use the same writer). */
export function invalidMessage (id: RequestId | null, error: Error): string {
  return errorMessage(id, toRpcError(error))
}
