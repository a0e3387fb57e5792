import { APP_ERR_INVALID_PARAMS, APP_ERR_INVALID_REQUEST } from '../../base/errors.js'
import { isInputRequired, type InputRequiredResult, type ToolInput } from '../../tool-api/define-tool.js'

// Multi round-trip requests (SEP-2322): a tool that needs the client's input returns inputRequired();
// a 2026-07-28 client answers on its next call (inputResponses, with the requestState echoed), and a
// 2025 session gets the same questions as server→client requests. The state is signed here, so a
// client can only echo what this server gave it, for the same tool.

/** Methods whose result may ask for input (spec: prompts/get, resources/read, tools/call). */
export const INPUT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read'])

/** Most rounds a 2025 call is carried through before it is given up. */
export const MAX_ROUNDS = 8

type NodeCrypto = typeof import('node:crypto')
let nodeCrypto: NodeCrypto | undefined
// Loaded on first use: node:crypto at startup costs a stdio cold start ~4 ms, and only this path needs it.
const cryptoModule = (): NodeCrypto => (nodeCrypto ??= process.getBuiltinModule('node:crypto'))

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Signs requestState for one method and target, and opens only what it signed. */
export class RequestStates {
  // Per server: a state outlives neither the process nor a move to another replica.
  private readonly key = crypto.getRandomValues(new Uint8Array(32))

  /** `state` sealed for `binding` (method and tool, prompt or resource). */
  seal (state: string, binding: string): string {
    const body = Buffer.from(state).toString('base64url')
    return `${body}.${this.mac(body, binding)}`
  }

  /** The state inside `sealed`, or APP_ERR_INVALID_PARAMS when it was not sealed here for `binding`. */
  open (sealed: unknown, binding: string): string {
    const dot = typeof sealed === 'string' ? sealed.lastIndexOf('.') : -1
    const given = Buffer.from(dot < 0 ? '' : (sealed as string).slice(dot + 1))
    const body = dot < 0 ? '' : (sealed as string).slice(0, dot)
    const expected = Buffer.from(this.mac(body, binding))
    if (dot < 0 || given.length !== expected.length || !cryptoModule().timingSafeEqual(given, expected)) {
      throw new APP_ERR_INVALID_PARAMS('requestState failed its integrity check: send the requestState of the previous answer unchanged, or call again without inputResponses and requestState to start over')
    }
    return Buffer.from(body, 'base64url').toString()
  }

  private mac (body: string, binding: string): string {
    return cryptoModule().createHmac('sha256', this.key).update(binding).update('\0').update(body).digest('base64url')
  }
}

/** What the answer binds requestState to: the method and the tool, prompt or resource it names. */
export const bindingOf = (method: string, params: Record<string, unknown>): string => `${method}\0${String(params.name ?? params.uri ?? '')}`

/** The previous round's answers and state a retry carries (inputResponses or requestState present), validated. */
export function readInput (params: Record<string, unknown>, binding: string, states: RequestStates): ToolInput {
  const { inputResponses, requestState } = params
  if (!isObject(inputResponses) || !Object.values(inputResponses).every(isObject)) {
    throw new APP_ERR_INVALID_PARAMS("'inputResponses' must map each key of the previous inputRequests to the client's result object, e.g. { \"user_name\": { \"action\": \"accept\", \"content\": { … } } }")
  }
  return { responses: inputResponses as ToolInput['responses'], state: requestState === undefined ? undefined : states.open(requestState, binding) }
}

/** A round's input requests sent as 2025 server→client requests; the answers by key, for the next round. */
export async function askClient (result: InputRequiredResult, ask: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>): Promise<ToolInput> {
  const entries = Object.entries(result.inputRequests)
  const answers = await Promise.all(entries.map(([, request]) => ask(request.method, request.params)))
  return { responses: Object.fromEntries(entries.map(([key], i) => [key, answers[i]])), state: result.requestState }
}

/** Runs a prompt or resource reader through its rounds: a 2025 scope asks the client itself, a modern one returns the question. */
export async function withRounds<T extends object> (era: 'legacy' | 'modern', ask: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>, run: (input: ToolInput | undefined) => Promise<T>, input: ToolInput | undefined): Promise<T> {
  let result = await run(input)
  if (era === 'modern') return result
  for (let round = 1; isInputRequired(result); round++) {
    if (round > MAX_ROUNDS) throw new APP_ERR_INVALID_REQUEST(`still asked for input after ${MAX_ROUNDS} rounds`)
    result = await run(await askClient(result, ask))
  }
  return result
}
