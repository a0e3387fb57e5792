import { createRequire } from 'node:module'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { toolError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { SymbolLanguage } from './symbol-languages.js'

/** One definition as the query found it: rows are 0-based, `from`/`to` are character offsets. */
export interface RawDefinition {
  kind: string
  name: string
  /** Set where the grammar names the owner outside the nesting (a Go method's receiver type). */
  container?: string
  start: number
  /** Row of the name: the signature runs from `start` to it. */
  nameRow: number
  end: number
  endColumn: number
  from: number
  to: number
}

/** What one parse found. */
export interface ParsedDefinitions {
  definitions: RawDefinition[]
  /** The tree holds ERROR nodes: some of the file did not parse (macro-heavy C, newer syntax). */
  hasErrors: boolean
}

/** Parses source text into definitions off the event loop (tree-sitter, WASM, one worker thread). */
export interface SymbolParser {
  /** Definitions in `text` by the language's query; PARSE_FAILED or CANCELLED tool errors otherwise. */
  definitions(text: string, language: SymbolLanguage, signal?: AbortSignal): Promise<ParsedDefinitions>
}

/** Where the tree-sitter runtime (CommonJS build) and the grammar files are. */
export interface TreeSitterLocation {
  runtime: string
  grammars: string
}

/** Heap of the parsing thread: a pathological file exhausts this, not the server. */
const WORKER_HEAP_MB = 512

/**
 * Source of the parsing thread (CommonJS eval code, so it survives bundling). Grammars and compiled queries
 * are kept per thread; every tree is deleted after its query ran (WASM memory is not garbage-collected). A
 * `@body` capture extends a definition to the body's end (a definition the grammar could only half parse).
 */
const PARSER_WORKER_SOURCE = `
const path = require('node:path')
const { parentPort, workerData } = require('node:worker_threads')
const { Parser, Language, Query } = require(workerData.runtime)
let ready
const languages = new Map()
async function prepare (grammar, source) {
  let entry = languages.get(grammar)
  if (entry === undefined) {
    entry = { language: await Language.load(path.join(workerData.grammars, grammar)), queries: new Map() }
    entry.parser = new Parser()
    entry.parser.setLanguage(entry.language)
    languages.set(grammar, entry)
  }
  let query = entry.queries.get(source)
  if (query === undefined) {
    query = new Query(entry.language, source)
    entry.queries.set(source, query)
  }
  return { parser: entry.parser, query }
}
parentPort.on('message', async ({ id, grammar, query: source, text }) => {
  let tree
  try {
    ready ??= Parser.init()
    await ready
    const { parser, query } = await prepare(grammar, source)
    tree = parser.parse(text)
    const definitions = []
    for (const match of query.matches(tree.rootNode)) {
      let def, name, container, body
      for (const capture of match.captures) {
        if (capture.name.startsWith('definition.')) def = capture
        else if (capture.name === 'name') name = capture.node
        else if (capture.name === 'container') container = capture.node.text
        else if (capture.name === 'body') body = capture.node
      }
      if (def === undefined || name === undefined) continue
      const node = def.node
      const last = body === undefined ? node : body
      definitions.push({
        kind: def.name.slice(11), name: name.text, container, start: node.startPosition.row, nameRow: name.startPosition.row,
        end: last.endPosition.row, endColumn: last.endPosition.column, from: node.startIndex, to: last.endIndex
      })
    }
    parentPort.postMessage({ id, definitions, hasErrors: tree.rootNode.hasError })
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message ? err.message : err) })
  } finally {
    if (tree !== undefined) tree.delete()
  }
})
`

/** Where web-tree-sitter and @repomix/tree-sitter-wasms are installed (resolved from this module), or null. */
export function locateTreeSitter (resolve: (id: string) => string = createRequire(import.meta.url).resolve): TreeSitterLocation | null {
  try {
    return {
      runtime: resolve('web-tree-sitter'),
      grammars: path.dirname(resolve('@repomix/tree-sitter-wasms/out/tree-sitter-c.wasm'))
    }
  } catch {
    return null
  }
}

interface Job {
  resolve: (parsed: ParsedDefinitions) => void
  reject: (err: Error) => void
}

const failed = (why: string): Error => toolError('PARSE_FAILED', `the parser stopped: ${why}`, 'read_files reads the file; search_regex finds definitions by pattern')

/** Creates the parser: one thread, started on the first file, ended (and restarted later) when a call is abandoned. */
export function createSymbolParser (where: TreeSitterLocation): SymbolParser {
  let worker: Worker | undefined
  let nextId = 0
  const jobs = new Map<number, Job>()
  // One file at a time: a queued parse waits on this chain, so ending the thread for an abandoned call
  // never fails another call's file.
  let chain: Promise<unknown> = Promise.resolve()

  const failAll = (err: Error): void => {
    for (const job of jobs.values()) job.reject(err)
    jobs.clear()
  }
  // An idle thread never keeps the process alive; one with a job in flight does, like any pending I/O.
  const track = (thread: Worker): void => {
    if (jobs.size > 0) thread.ref()
    else thread.unref()
  }
  function start (): Worker {
    const thread = new Worker(PARSER_WORKER_SOURCE, { eval: true, workerData: where, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } })
    thread.unref()
    thread.on('message', (msg: { id: number, definitions?: RawDefinition[], hasErrors?: boolean, error?: string }) => {
      const job = jobs.get(msg.id)
      // An answer can cross the terminate() of the call it belonged to; that call has already been told.
      /* c8 ignore next */
      if (job === undefined) return
      jobs.delete(msg.id)
      track(thread)
      if (msg.error !== undefined) job.reject(failed(msg.error))
      else job.resolve({ definitions: msg.definitions as RawDefinition[], hasErrors: msg.hasErrors === true })
    })
    // A crash or the heap limit ends the thread: its jobs fail, and the next file starts a fresh one.
    thread.on('error', (err) => failAll(failed(err.message)))
    thread.on('exit', () => {
      if (worker === thread) worker = undefined
      failAll(failed('the parsing thread ended'))
    })
    return thread
  }

  function run (text: string, language: SymbolLanguage, signal?: AbortSignal): Promise<ParsedDefinitions> {
    signal?.throwIfAborted()
    worker ??= start()
    const thread = worker
    const id = ++nextId
    return new Promise<ParsedDefinitions>((resolve, reject) => {
      const onAbort = (): void => {
        jobs.delete(id)
        // The engine answers an aborted call with its own TIMEOUT or CANCELLED; this only ends the wait.
        reject(toolError('CANCELLED', 'the outline was stopped', 'ask for fewer or smaller files'))
        // The thread may be deep in a parse: ending it is the only way to stop the work. Files go one at a
        // time, so the thread running this one is the current thread.
        worker = undefined
        thread.terminate().catch(() => undefined)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const settle = <T>(fn: (v: T) => void) => (v: T): void => {
        signal?.removeEventListener('abort', onAbort)
        fn(v)
      }
      jobs.set(id, { resolve: settle(resolve), reject: settle(reject) })
      track(thread)
      thread.postMessage({ id, grammar: language.grammar, query: language.query, text: language.prepare?.(text) ?? text })
    })
  }

  return {
    definitions (text, language, signal) {
      const result = chain.then(() => run(text, language, signal))
      chain = result.catch(() => undefined)
      return result
    }
  }
}

/** The production parser, or undefined (logged) when web-tree-sitter or its grammars are not installed. */
export function symbolParser (log: Logger, where: TreeSitterLocation | null = locateTreeSitter()): SymbolParser | undefined {
  if (where !== null) return createSymbolParser(where)
  log.warn('web-tree-sitter or its grammars are not installed: get_symbols disabled')
  return undefined
}
