import { createRequire } from 'node:module'
import path from 'node:path'
import type { Language as LanguageType, Parser as ParserType, Query as QueryType, Tree } from 'web-tree-sitter'
import { checkAgainstBraces, mergeReparsed, reparseText, type FoundDefinition } from './c-repair.js'
import { scanC } from './c-source.js'
import type { ParsedDefinitions, ParseRequest, ParserThreadData } from './parser.js'
import { collectReferences } from './reference-collect.js'

interface Grammar {
  language: LanguageType
  parser: ParserType
  queries: Map<string, QueryType>
}

/**
 * The parsing thread's handler. Grammars and compiled queries are kept per thread; every tree is deleted after
 * its query ran (WASM memory is not garbage-collected). A C-family text is scanned first (c-source.ts); C's
 * definitions are then checked against the braces the scan counted, and a file whose tree they contradict is parsed
 * a second time with its function bodies blank (c-repair.ts): 13 of the 3,379 files of Linux's kernel/, mm/,
 * net/core, fs/ext4 and include/linux. The runtime is loaded from its resolved CommonJS file: a bundle must not
 * carry web-tree-sitter, which finds its own .wasm beside itself.
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
  return async ({ grammar, query: source, text, dialect, references }) => {
    ready ??= Parser.init()
    await ready
    const { parser, query } = await prepare(grammar, source)
    // The references query is compiled before the parse, so a grammar's query failing never costs one.
    const referenceQuery = references === undefined ? undefined : (await prepare(grammar, references)).query
    // Null only when a progress callback stops the parse, and this one never does.
    const parse = (input: string): Tree => parser.parse(input, null, options) as Tree
    const scanned = dialect === undefined ? undefined : scanC(text, dialect === 'c')
    const tree = parse(scanned?.text ?? text)
    try {
      const c = dialect === 'c'
      let found = definitionsIn(tree, query, c)
      if (c && scanned !== undefined) {
        const check = checkAgainstBraces(found, scanned)
        found = check.kept
        if (check.broken) {
          const again = parse(reparseText(found, scanned))
          try {
            found = mergeReparsed(found, definitionsIn(again, query, c), scanned)
          } finally {
            again.delete()
          }
        }
      }
      const parsed: ParsedDefinitions = { definitions: found.map(({ body, nameAt, ...definition }) => definition), hasErrors: tree.rootNode.hasError }
      // Positions in the scanned text are the text's own (the scan never moves a character).
      if (referenceQuery !== undefined) parsed.references = collectReferences(referenceQuery.captures(tree.rootNode, options), text, new Set(found.map(d => d.nameAt)))
      return parsed
    } finally {
      tree.delete()
    }
  }

  /** The query's definitions in `tree`; with `bodies`, each with the offset of its body (C's check needs it). */
  function definitionsIn (tree: Tree, query: QueryType, bodies: boolean): FoundDefinition[] {
    const definitions: FoundDefinition[] = []
    for (const match of query.matches(tree.rootNode, options)) {
      const named = new Map(match.captures.map(capture => [capture.name, capture.node]))
      const def = match.captures.findLast(capture => capture.name.startsWith('definition.'))
      const name = named.get('name')
      if (def === undefined || name === undefined) continue
      const body = bodies ? named.get('body') ?? def.node.childForFieldName('body') ?? undefined : undefined
      // `@head` and `@body` extend a definition the grammar read in pieces: a head split by an unknown macro, an
      // ERROR before the body.
      const first = named.get('head') ?? def.node
      const last = named.get('body') ?? def.node
      const container = named.get('container')?.text
      const found: FoundDefinition = {
        kind: def.name.slice('definition.'.length),
        name: name.text,
        ...(container === undefined ? {} : { container }),
        start: first.startPosition.row,
        nameRow: name.startPosition.row,
        nameAt: name.startIndex,
        end: last.endPosition.row,
        endColumn: last.endPosition.column,
        from: first.startIndex,
        to: last.endIndex
      }
      if (body !== undefined) found.body = body.startIndex
      definitions.push(found)
    }
    return definitions
  }
}
