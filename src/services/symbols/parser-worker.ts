import { createRequire } from 'node:module'
import path from 'node:path'
import type { Language as LanguageType, Parser as ParserType, Query as QueryType, Tree } from 'web-tree-sitter'
import { serveAs } from '../threads/index.js'
import type { ParsedDefinitions, RawDefinition, TreeSitterLocation } from './parser.js'
import { collectReferences } from './reference-collect.js'

/** What the parsing thread is started with. */
export interface ParserThreadData extends TreeSitterLocation {
  /** Shared with the serving thread: while it is 1, a parse sleeps mid-way (a second at most). */
  yieldFlag?: Int32Array
}

/** One parse: the grammar's file name, the definitions query, the text, and the references query when they are wanted. */
export interface ParseRequest {
  grammar: string
  query: string
  text: string
  references?: string
}

interface Grammar {
  language: LanguageType
  parser: ParserType
  queries: Map<string, QueryType>
}

/**
 * The parsing thread's handler. Grammars and compiled queries are kept per thread; every tree is deleted after
 * its query ran (WASM memory is not garbage-collected). A `@body` capture extends a definition to the body's end
 * (a definition the grammar could only half parse). The runtime is loaded from its resolved CommonJS file: a
 * bundle must not carry web-tree-sitter, which finds its own .wasm beside itself.
 */
export function parserHandler (data: ParserThreadData): (request: ParseRequest) => Promise<ParsedDefinitions> {
  const { Parser, Language, Query } = createRequire(import.meta.url)(data.runtime) as typeof import('web-tree-sitter')
  // While a call a client waits on runs, a background parse sleeps here (the serving thread wakes it when the
  // flag clears): that call gets the cores.
  const flag = data.yieldFlag
  const options = flag === undefined
    ? undefined
    : { progressCallback: (): boolean => { if (Atomics.load(flag, 0) === 1) Atomics.wait(flag, 0, 1, 1000); return false } }
  let ready: Promise<void> | undefined
  const grammars = new Map<string, Grammar>()
  async function prepare (file: string, source: string): Promise<{ parser: ParserType, query: QueryType }> {
    let grammar = grammars.get(file)
    if (grammar === undefined) {
      const language = await Language.load(path.join(data.grammars, file))
      const parser = new Parser()
      parser.setLanguage(language)
      grammar = { language, parser, queries: new Map() }
      grammars.set(file, grammar)
    }
    let query = grammar.queries.get(source)
    if (query === undefined) {
      query = new Query(grammar.language, source)
      grammar.queries.set(source, query)
    }
    return { parser: grammar.parser, query }
  }
  return async ({ grammar, query: source, text, references }) => {
    ready ??= Parser.init()
    await ready
    const { parser, query } = await prepare(grammar, source)
    // The references query is compiled before the parse, so a grammar's query failing never costs one.
    const referenceQuery = references === undefined ? undefined : (await prepare(grammar, references)).query
    // Null only when a progress callback stops the parse, and this one never does.
    const tree = parser.parse(text, null, options) as Tree
    try {
      const definitions: RawDefinition[] = []
      const nameStarts = new Set<number>()
      for (const match of query.matches(tree.rootNode, options)) {
        const named = new Map(match.captures.map(capture => [capture.name, capture.node]))
        const def = match.captures.findLast(capture => capture.name.startsWith('definition.'))
        const name = named.get('name')
        if (def === undefined || name === undefined) continue
        const last = named.get('body') ?? def.node
        const container = named.get('container')?.text
        nameStarts.add(name.startIndex)
        definitions.push({
          kind: def.name.slice('definition.'.length),
          name: name.text,
          ...(container === undefined ? {} : { container }),
          start: def.node.startPosition.row,
          nameRow: name.startPosition.row,
          end: last.endPosition.row,
          endColumn: last.endPosition.column,
          from: def.node.startIndex,
          to: last.endIndex
        })
      }
      const parsed: ParsedDefinitions = { definitions, hasErrors: tree.rootNode.hasError }
      if (referenceQuery !== undefined) parsed.references = collectReferences(referenceQuery.captures(tree.rootNode, options), text, nameStarts)
      return parsed
    } finally {
      tree.delete()
    }
  }
}

serveAs('parser-worker', parserHandler)
