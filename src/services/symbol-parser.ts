import { createRequire } from 'node:module'
import path from 'node:path'
import { toolError } from '../errors.js'
import type { Logger } from '../logger.js'
import { createJobThread } from './job-thread.js'
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
// The code index's parsers run below ripgrep's priority (Linux: a thread's own niceness, by its thread id).
if (workerData.niceness !== undefined) {
  try { require('node:os').setPriority(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()), workerData.niceness) } catch {}
}
// And they stop mid-parse while a call a client waits on runs (the flag is shared with the serving thread,
// which wakes them when it clears): sleeping here, for a second at most, gives that call the cores.
const flag = workerData.yieldFlag
const progressCallback = flag === undefined ? undefined : () => { if (Atomics.load(flag, 0) === 1) Atomics.wait(flag, 0, 1, 1000) }
const options = progressCallback === undefined ? undefined : { progressCallback }
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
    tree = parser.parse(text, null, options)
    const definitions = []
    for (const match of query.matches(tree.rootNode, options)) {
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

const failed = (why: string): Error => toolError('PARSE_FAILED', `the parser stopped: ${why}`, 'read_files reads the file; search_regex finds definitions by pattern')

/** How a background parser (the code index's) gives way to the calls clients wait on. */
export interface BackgroundPriority {
  /** The thread's own scheduling priority (Linux). */
  niceness: number
  /** Shared flag: while it is 1, the parser sleeps mid-parse (woken by Atomics.notify when it clears). */
  yieldFlag?: Int32Array
}

/**
 * Creates the parser: one thread, started on the first file, ended (and restarted later) when a call is
 * abandoned. `background`: the code index's parsers, which give way to calls (get_symbols' does not).
 */
export function createSymbolParser (where: TreeSitterLocation, background?: BackgroundPriority): SymbolParser {
  const thread = createJobThread<{ grammar: string, query: string, text: string }, ParsedDefinitions>({
    source: PARSER_WORKER_SOURCE,
    workerData: { ...where, niceness: background?.niceness, yieldFlag: background?.yieldFlag },
    heapMb: WORKER_HEAP_MB,
    errors: {
      failed: (why) => failed(why),
      stopped: () => failed('the parsing thread ended'),
      cancelled: () => toolError('CANCELLED', 'the outline was stopped', 'ask for fewer or smaller files')
    }
  })
  return {
    definitions: async (text, language, signal) => await thread.run({ grammar: language.grammar, query: language.query, text: language.prepare?.(text) ?? text }, signal)
  }
}

/** The production parser, or undefined (logged) when web-tree-sitter or its grammars are not installed. */
export function symbolParser (log: Logger, where: TreeSitterLocation | null = locateTreeSitter()): SymbolParser | undefined {
  if (where !== null) return createSymbolParser(where)
  log.warn('web-tree-sitter or its grammars are not installed: get_symbols disabled')
  return undefined
}
