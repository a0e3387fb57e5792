import { createRequire } from 'node:module'
import path from 'node:path'
import { toolError } from '../../base/errors.js'
import type { Logger } from '../../base/logger.js'
import { createJobThread, threadModule, type JobThread } from '../threads/index.js'
import type { Dialect, SymbolLanguage } from './languages.js'
import type { FileReferences } from './references.js'
import { REFERENCE_QUERIES } from './reference-queries.js'
import { WARM_ROUNDS, warmSamples } from './warm-up.js'

/** What the parsing thread is started with. */
export interface ParserThreadData extends TreeSitterLocation {
  /** Shared with the serving thread: while it is 1, a parse sleeps mid-way (a second at most). */
  yieldFlag?: Int32Array
}

/** One parse: the grammar's file name, the definitions query, the text, how a C-family text is prepared, and the references query when they are wanted. */
export interface ParseRequest {
  grammar: string
  query: string
  text: string
  dialect?: Dialect
  references?: string
}

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
  /** The uses of names, when they were asked for. */
  references?: FileReferences
}

/** Parses source text into definitions off the event loop (tree-sitter, WASM, one worker thread). */
export interface SymbolParser {
  /**
   * Definitions in `text` by the language's query (and, with `references`, the uses of names from the same
   * parse); PARSE_FAILED or CANCELLED tool errors otherwise.
   */
  definitions(text: string, language: SymbolLanguage, signal?: AbortSignal, options?: { references?: boolean }): Promise<ParsedDefinitions>
  /**
   * Starts the parsing thread now and parses the warm-up samples (warm-up.ts) in it, so the first outline a client
   * asks for does not wait on the thread, the runtime or a first parse by unoptimized code. Resolves when done.
   */
  warm(): Promise<void>
  /** Ends the parsing thread (a later parse starts it again). */
  close(): Promise<void>
}

/** Where the tree-sitter runtime (CommonJS build) and the grammar files are. */
export interface TreeSitterLocation {
  runtime: string
  grammars: string
}

/** Heap of the parsing thread: a pathological file exhausts this, not the server. */
const WORKER_HEAP_MB = 512

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

const failed = (why: string): Error => toolError('PARSE_FAILED', `the parser stopped: ${why}`, { step: 'read-or-grep' })

/** How a background parser (the code index's) gives way to the calls clients wait on. */
export interface BackgroundPriority {
  /** The thread's own scheduling priority (Linux). */
  niceness?: number
  /** Shared flag: while it is 1, the parser sleeps mid-parse (woken by Atomics.notify when it clears). */
  yieldFlag?: Int32Array
}

/** A parser thread's module: `parser-worker`, or one that wraps `parserHandler` to do more with a parse in the thread. */
export interface ParserModule {
  url: URL
  name: string
  /** Jobs handed to the thread at once (see JobThreadOptions.depth). */
  depth?: number
}

/**
 * A parser thread running `module`: started on the first job, ended (and restarted later) when a job is
 * abandoned; its failures are PARSE_FAILED and CANCELLED tool errors. `background`: the code index's, which give
 * way to calls.
 */
export function parserThread<Request extends object, Result> (where: TreeSitterLocation, background?: BackgroundPriority, module: ParserModule = { url: threadModule('parser-worker', import.meta.url), name: 'parser-worker' }): JobThread<Request, Result> {
  const data: ParserThreadData = { ...where, yieldFlag: background?.yieldFlag }
  return createJobThread<Request, Result>({
    ...module,
    data,
    heapMb: WORKER_HEAP_MB,
    niceness: background?.niceness,
    errors: {
      failed: (why) => failed(why),
      stopped: () => failed('the parsing thread ended'),
      cancelled: () => toolError('CANCELLED', 'the outline was stopped', 'ask for fewer or smaller files')
    }
  })
}

/** The parse of `text` as `language` (with the references query when they are wanted). */
export function parseRequest (text: string, language: SymbolLanguage, options?: { references?: boolean }): ParseRequest {
  return {
    grammar: language.grammar,
    query: language.query,
    text,
    dialect: language.dialect,
    ...(options?.references === true ? { references: REFERENCE_QUERIES[language.grammar] } : {})
  }
}

/**
 * Creates the parser: one thread, started on the first file, ended (and restarted later) when a call is
 * abandoned. `background`: the code index's parsers, which give way to calls (get_symbols' does not).
 */
export function createSymbolParser (where: TreeSitterLocation, background?: BackgroundPriority): SymbolParser {
  const thread = parserThread<ParseRequest, ParsedDefinitions>(where, background)
  const definitions: SymbolParser['definitions'] = async (text, language, signal, options) => await thread.run(parseRequest(text, language, options), signal)
  return {
    definitions,
    async warm () {
      for (const { language, text } of warmSamples()) {
        for (let round = 0; round < WARM_ROUNDS; round++) await definitions(text, language)
      }
    },
    close: async () => { await thread.close() }
  }
}

/** The production parser, or undefined (logged) when web-tree-sitter or its grammars are not installed. */
export function symbolParser (log: Logger, where: TreeSitterLocation | null = locateTreeSitter()): SymbolParser | undefined {
  if (where !== null) return createSymbolParser(where)
  log.warn('web-tree-sitter or its grammars are not installed: get_symbols disabled')
  return undefined
}
