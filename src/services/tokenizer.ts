import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** The BPE encoding used for budgets (cl100k_base: a real GPT-4-family vocabulary; half the load of o200k). */
export const TOKENIZER_ENCODING = 'cl100k_base'

/** Counts tokens to budget responses. */
export interface Tokenizer {
  /** Encoding name, e.g. `cl100k_base`. */
  readonly encoding: string
  /**
   * A synchronous, never-low estimate: the UTF-8 byte length (every byte-level BPE token covers at least one
   * byte). Text within a budget by this measure needs no exact count.
   */
  count(text: string): number
  /** A quick central estimate (chars / 3.2), for sizing cuts; it may be below the true count. */
  estimate(text: string): number
  /**
   * The exact BPE token count, computed on a worker thread (loading the ranks takes seconds of CPU and
   * would stall the event loop). Falls back to `count` when the worker cannot run.
   */
  countExact(text: string): Promise<number>
  /** Stops the worker (it is unref'd, so an idle process exits without this). */
  close(): Promise<void>
}

// The worker is CommonJS eval code so it survives bundling; it loads js-tiktoken from resolved file paths.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { Tiktoken } = require(workerData.lite)
const enc = new Tiktoken(require(workerData.ranks))
parentPort.on('message', ({ id, text }) => {
  let count
  try { count = enc.encode(text, 'all').length } catch { count = -1 }
  parentPort.postMessage({ id, count })
})
parentPort.postMessage({ ready: true })
`

interface Pending {
  resolve: (n: number) => void
  text: string
}

/** Creates the tokenizer; the worker starts on the first exact count, never at startup. */
export function createTokenizer (): Tokenizer {
  let worker: Worker | undefined
  let broken = false
  let nextId = 0
  const pending = new Map<number, Pending>()
  const bytes = (text: string): number => Buffer.byteLength(text, 'utf8')

  function fail (): void {
    broken = true
    worker = undefined
    for (const p of pending.values()) p.resolve(bytes(p.text))
    pending.clear()
  }

  function start (): Worker | undefined {
    if (worker !== undefined || broken) return worker
    try {
      const require = createRequire(import.meta.url)
      const lite = require.resolve('js-tiktoken/lite')
      const ranks = require.resolve(`js-tiktoken/ranks/${TOKENIZER_ENCODING}`)
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { lite, ranks } })
      w.on('message', (msg: { id?: number, count?: number }) => {
        if (msg.id === undefined) return
        const p = pending.get(msg.id)
        if (p === undefined) return
        pending.delete(msg.id)
        p.resolve(msg.count === undefined || msg.count < 0 ? bytes(p.text) : msg.count)
        if (pending.size === 0) w.unref()
      })
      w.on('error', fail)
      w.on('exit', () => { if (worker === w) fail() })
      w.unref()
      worker = w
    } catch {
      broken = true
    }
    return worker
  }

  return {
    encoding: TOKENIZER_ENCODING,
    count: bytes,
    estimate: (text) => Math.ceil(text.length / 3.2),
    countExact (text) {
      const w = start()
      if (w === undefined) return Promise.resolve(bytes(text))
      return new Promise<number>(resolve => {
        const id = ++nextId
        pending.set(id, { resolve, text })
        w.ref()
        w.postMessage({ id, text })
      })
    },
    async close () {
      const w = worker
      worker = undefined
      broken = true
      if (w !== undefined) await w.terminate()
      for (const p of pending.values()) p.resolve(bytes(p.text))
      pending.clear()
    }
  }
}
