import { Type } from '@sinclair/typebox'
import { isToolError, toolError } from '../base/errors.js'
import { withNextStep } from '../tool-api/next-step.js'
import { pruneMentions } from '../services/prune-mentions.js'
import { buildOutline, type OutlineSymbol, MAX_SOURCE_BYTES, SYMBOL_KINDS, supportedLanguages, symbolLanguageOf, type SymbolKind, type SymbolParser } from '../services/symbols/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import { MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS, fitPage } from '../tool-kit/budget.js'
import { defineTool, Inject, type ToolResult } from '../tool-api/define-tool.js'
import { counted, shownInput } from '../tool-kit/format.js'
import { formatBytes } from '../services/byte-size.js'
import { paginate, pagingFooter, PaginationOutput, withoutDefaults } from '../tool-kit/paging.js'
import { SymbolEntryOutput } from '../tool-kit/definitions.js'
import { binaryError, nonTextKind } from '../tool-kit/read-nontext.js'

/** Files per call; more is TOO_MANY_ITEMS. */
const MAX_FILES = 20
/** Largest file outlined; bigger ones are FILE_TOO_LARGE. */
export const MAX_OUTLINE_BYTES = MAX_SOURCE_BYTES

/** structuredContent of get_symbols: each file's outcome, then the symbols on this page. */
export const GetSymbolsOutput = Type.Object({
  files: Type.Array(Type.Object({
    path: Type.String({ description: 'Path as requested' }),
    language: Type.Optional(Type.String({ description: 'Language parsed' })),
    symbols: Type.Optional(Type.Integer({ description: 'Symbols after filters' })),
    error: Type.Optional(Type.String({ description: 'Error code if not parsed' }))
  }), { description: 'One per requested file, in order' }),
  symbols: Type.Array(SymbolEntryOutput, { description: 'Symbols on this page, in file then source order' }),
  pagination: PaginationOutput
})

interface FileOutline {
  shown: string
  language?: string
  /** Symbols that pass the filters. */
  kept: OutlineSymbol[]
  notes: string[]
  error?: { code: string, message: string }
}

interface Filters { depth: number, kinds: readonly SymbolKind[] | undefined }

async function outlineOf (workspace: WorkspaceService, parser: SymbolParser, input: string, index: number, filters: Filters, signal: AbortSignal, unserved: ReadonlySet<string>): Promise<FileOutline> {
  const field = `paths[${index}]`
  const outline: FileOutline = { shown: shownInput(input, field), kept: [], notes: [] }
  try {
    const resolved = await workspace.resolve(input, { field, signal })
    const shown = outline.shown = resolved.requested
    const language = symbolLanguageOf(resolved.relative)
    const handle = await workspace.openFile(resolved, field)
    try {
      if (language === undefined) {
        throw toolError('UNSUPPORTED_LANGUAGE', `${field}: "${shown}" is not in a language the outline reads; it reads ${supportedLanguages()}`,
          `read_files reads it; search_regex finds definitions by pattern, e.g. search_regex pattern="^\\\\s*(def|class|function) " path="${shown}"`)
      }
      const { size } = await handle.stat()
      if (size > MAX_OUTLINE_BYTES) {
        throw toolError('FILE_TOO_LARGE', `${field}: "${shown}" is ${formatBytes(size)} (outlines are made of files up to ${formatBytes(MAX_OUTLINE_BYTES)})`,
          `search_regex path="${shown}" finds definitions by pattern; read_files with start_line/end_line reads a window`)
      }
      const sniff = await workspace.sniff(handle)
      if (sniff.binary) throw binaryError(shown, size, await nonTextKind(sniff))
      const window = await workspace.readLines(handle, size, sniff, { start: 1, maxLines: Number.MAX_SAFE_INTEGER, signal })
      const parsed = await parser.definitions(window.lines.join('\n'), language, signal)
      const symbols = buildOutline(parsed.definitions, window.lines)
      outline.language = language.name
      const wanted = symbols.filter(s => filters.kinds === undefined || filters.kinds.includes(s.kind))
      outline.kept = wanted.filter(s => s.depth <= filters.depth)
      const deeper = wanted.length - outline.kept.length
      if (deeper > 0) outline.notes.push(`${counted(deeper, 'nested symbol')} below depth ${filters.depth} not shown (depth=${filters.depth + 1} or more shows them)`)
      if (parsed.hasErrors) outline.notes.push('parts of the file did not parse (macros or syntax the grammar does not know): symbols there may be missing')
      if (window.longLines !== undefined) outline.notes.push('lines over 8 KB were cut before parsing (minified code?): symbols on them may be missing')
    } finally {
      await handle.close()
    }
  } catch (err) {
    // The workspace and the parser raise tool errors only; anything else is a bug for dispatch to mask and log.
    /* c8 ignore next */
    if (!isToolError(err)) throw err
    outline.error = { code: err.toolCode, message: withNextStep(err, unserved).message }
  }
  return outline
}

function lines (s: OutlineSymbol): string {
  return s.line === s.endLine ? `${s.line}` : `${s.line}-${s.endLine}`
}

/** The text of a page holding the first `n` of its entries. */
function render (outlines: FileOutline[], entries: Array<{ file: number, symbol: OutlineSymbol }>, offset: number, flat: boolean): string {
  const text: string[] = []
  const onPage = new Set(entries.map(e => e.file))
  let current = -1
  const header = (file: number): void => {
    const o = outlines[file]
    if (o.error !== undefined) {
      text.push(`## ${o.shown} — ${o.error.message}`)
      return
    }
    text.push(`## ${o.shown} — ${o.language as string}, ${counted(o.kept.length, 'symbol')}`)
    for (const note of o.notes) text.push(`Note: ${note}`)
    if (o.kept.length === 0) text.push('(no symbols)')
  }
  for (const entry of entries) {
    // Files with nothing to page through (errors, empty outlines) are shown once, on the first page.
    for (let f = current + 1; f < entry.file; f++) if (offset === 0 && !onPage.has(f) && outlines[f].kept.length === 0) header(f)
    const first = entry.file !== current
    if (first) header(entry.file)
    current = entry.file
    const s = entry.symbol
    const owner = s.container !== undefined && (flat || (first && s.depth > 1)) ? ` (in ${s.container})` : ''
    const indent = flat ? '' : '  '.repeat(s.depth - 1)
    text.push(`${indent}${lines(s)} ${s.kind} ${s.name}${owner}: ${s.signature}`)
  }
  for (let f = current + 1; f < outlines.length; f++) if (offset === 0 && outlines[f].kept.length === 0) header(f)
  return text.join('\n')
}

/** Parameters of get_symbols. */
const GetSymbolsInput = Type.Object({
  paths: Type.Array(Type.String({ minLength: 1, description: 'A source file, e.g. "src/app.ts"' }), { minItems: 1, description: 'Files (1–20), e.g. ["src/app.ts"]' }),
  depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 2, description: 'Nesting levels, e.g. 1 (top level only) or 2 (with members)' })),
  kinds: Type.Optional(Type.Array(Type.Union(SYMBOL_KINDS.map(k => Type.Literal(k))), { minItems: 1, description: 'Only these kinds, e.g. ["class", "function"]' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 300, description: 'Symbols per page, e.g. 300' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_offset of the previous page, e.g. 300' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 8000, description: 'Token budget, e.g. 8000' })),
  workspace: Inject('workspace'),
  symbols: Inject('symbols'),
  tokenizer: Inject('tokenizer')
})

/** Outlines of source files: classes, functions, methods, types … with their line ranges, by tree-sitter. */
export const getSymbols = defineTool({
  name: 'get_symbols',
  title: 'Get Symbols',
  category: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Get the outline of source files — classes, functions, methods, types with line ranges and signatures — pass several in `paths` to outline them in one call.\n\n' +
    'read_files reads a symbol\'s lines; search_regex finds text across files. Parsed with tree-sitter: TypeScript, JavaScript, Python, Go, Rust, Java, C and C++.',
  input: GetSymbolsInput,
  output: GetSymbolsOutput,
  timeoutHint: 'outline fewer files per call, then call again',
  examples: [
    { comment: 'What is in a file', arguments: { paths: ['src/app.ts'] } },
    { comment: 'Only the top-level classes and functions of two files', arguments: { paths: ['src/app.ts', 'src/server.py'], depth: 1, kinds: ['class', 'function'] } }
  ],
  async run (args, { signal, unserved }) {
    const { paths, depth = 2, kinds, page_size: pageSize = 300, offset = 0, max_response_tokens: budget = 8000, workspace, symbols: parser, tokenizer } = args
    if (paths.length > MAX_FILES) {
      throw toolError('TOO_MANY_ITEMS', `paths: ${paths.length} files given, at most ${MAX_FILES} per call`, `split them into ${Math.ceil(paths.length / MAX_FILES)} calls`)
    }
    const outlines: FileOutline[] = []
    for (let i = 0; i < paths.length; i++) {
      signal.throwIfAborted()
      outlines.push(await outlineOf(workspace, parser, paths[i], i, { depth, kinds }, signal, unserved))
    }
    const entries = outlines.flatMap((o, file) => o.kept.map(symbol => ({ file, symbol })))
    const page = paginate(entries, offset, pageSize)
    const nextArgs = withoutDefaults({ ...args, paths: outlines.filter(o => o.error === undefined).map(o => o.shown), offset: undefined }, GetSymbolsInput)
    const { text, pagination } = await fitPage(page.pagination, (kept, pagination, cut) => {
      const text = [
        pruneMentions(`# Outline of ${counted(paths.length, 'file')} — ${counted(entries.length, 'symbol')} (lines first-last; read_files files=[{"path":…,"start_line":first,"end_line":last}] reads one)`, unserved),
        render(outlines, page.items.slice(0, kept), page.pagination.offset, kinds !== undefined)
      ]
      if (cut !== undefined) text.push(cut)
      if (page.items.length === 0 && entries.length > 0) text.push(`Note: offset ${offset} is past the end (${counted(entries.length, 'symbol')}); use offset=0`)
      text.push(pagingFooter('get_symbols', pagination, nextArgs, 'Symbols'))
      return text.join('\n')
    }, 'symbol', budget, tokenizer, signal)
    const result: ToolResult = {
      content: [{ type: 'text', text }],
      structuredContent: {
        files: outlines.map(o => o.error !== undefined ? { path: o.shown, error: o.error.code } : { path: o.shown, language: o.language, symbols: o.kept.length }),
        symbols: page.items.slice(0, pagination.returned).map(({ file, symbol: s }) => ({
          path: outlines[file].shown, kind: s.kind, name: s.name, ...(s.container !== undefined ? { container: s.container } : {}), line: s.line, end_line: s.endLine, signature: s.signature
        })),
        pagination
      }
    }
    if (outlines.every(o => o.error !== undefined)) result.isError = true
    return result
  }
})
