import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import { type NameMatch, indexedLines } from '../services/code-index/index.js'
import { SYMBOL_KINDS } from '../services/symbols/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import { MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS, fitPage } from '../tool-kit/budget.js'
import { changedSinceIndexed, indexNotes, scopeOf, shownPath, INDEX_TASK } from '../tool-kit/code-index-common.js'
import { pruneLines, pruneMentions } from '../services/prune-mentions.js'
import { defineTool, Inject, type ToolContext, type ToolResult } from '../tool-api/define-tool.js'
import { rank, splitName, SymbolEntryOutput, type Found } from '../tool-kit/definitions.js'
import { counted, cutLine } from '../tool-kit/format.js'
import { formatCall, paginate, pagingFooter, PaginationOutput, withoutDefaults } from '../tool-kit/paging.js'

/** Candidates read from the index per call; more matches make the total a lower bound. */
const MAX_CANDIDATES = 5000
/** Longest body shown per definition. */
const MAX_BODY_LINES = 200

/** structuredContent of find_symbol: the definitions on this page. */
export const FindSymbolOutput = Type.Object({
  definitions: Type.Array(SymbolEntryOutput, { description: 'Best match first' }),
  pagination: PaginationOutput
})

const FindSymbolInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Symbol name; "Owner.name" or "Owner::name" narrows to members, e.g. "kmalloc" or "Uploader.retry"' }),
  match: Type.Optional(Type.Union([Type.Literal('exact'), Type.Literal('prefix'), Type.Literal('substring')], { default: 'exact', description: 'How the name matches (case-insensitive), e.g. "prefix"' })),
  kind: Type.Optional(Type.Union(SYMBOL_KINDS.map(k => Type.Literal(k)), { description: 'Only this kind, e.g. "function"' })),
  path: Type.Optional(Type.String({ description: 'Only definitions in this file or folder, e.g. "src/services"' })),
  include_body: Type.Optional(Type.Boolean({ default: false, description: 'Also show each definition\'s lines (up to 200), e.g. true' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20, description: 'Definitions per page, e.g. 20' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_offset of the previous page, e.g. 20' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 8000, description: 'Token budget, e.g. 8000' })),
  workspace: Inject('workspace'),
  codeIndex: Inject('codeIndex'),
  tokenizer: Inject('tokenizer')
})

function definitionLine (f: Found): string {
  const span = f.line === f.endLine ? `${f.line}` : `${f.line}-${f.endLine}`
  return `${f.shown}:${span} ${f.kind} ${f.container !== null ? `${f.container}.` : ''}${f.name}: ${f.signature}`
}

/** A definition's lines (up to MAX_BODY_LINES, then the call that reads the rest), numbered as read_files numbers them. */
async function bodyOf (workspace: WorkspaceService, f: Found, ctx: Pick<ToolContext, 'signal' | 'unserved'>): Promise<string[]> {
  const lines = await indexedLines(workspace, f.shown, f.line, f.endLine, MAX_BODY_LINES, ctx.signal)
  if (lines === undefined) return [changedSinceIndexed(ctx.unserved)]
  const body = lines.map(l => `${l.n}\t${cutLine(l.text, 500)}`)
  if (f.endLine - f.line + 1 > MAX_BODY_LINES) body.push(pruneMentions(`… ${f.endLine - f.line + 1 - MAX_BODY_LINES} more lines (${formatCall('read_files', { files: [{ path: f.shown, start_line: f.line + MAX_BODY_LINES, end_line: f.endLine }] })})`, ctx.unserved))
  return body
}

/** Definitions by name from the symbol index: where a function, class, type or macro is defined. */
export const findSymbol = defineTool({
  name: 'find_symbol',
  title: 'Find Symbol',
  category: 'search',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Find where a function, class, type, method or macro is defined, by name, across the workspace — best match first, optionally with each definition\'s body.\n\n' +
    'Served from the code index (built in the background). get_symbols outlines one file; search_code ranks code by words; search_regex finds any text.',
  input: FindSymbolInput,
  output: FindSymbolOutput,
  task: INDEX_TASK,
  timeoutHint: 'narrow it with path or kind, or ask without include_body',
  examples: [
    { comment: 'Where is it defined?', arguments: { name: 'createServer' } },
    { comment: 'The definition itself, in one folder', arguments: { name: 'parseConfig', path: 'src', include_body: true } }
  ],
  async run (args, ctx) {
    const { name: input, match = 'exact', kind, path, include_body: withBody = false, page_size: pageSize = 20, offset = 0, max_response_tokens: budget = 8000, workspace, codeIndex, tokenizer } = args
    const { owner, name } = splitName(input.trim())
    const ownerKey = owner?.toLowerCase()
    if (name.trim() === '') throw toolError('INVALID_ARGUMENT', `name: "${input}" names no symbol`, 'pass a name, e.g. name="createServer"')
    const scope = await scopeOf(workspace, path, ctx.signal)
    const notes = await indexNotes(codeIndex, ctx)
    const rows = codeIndex.findSymbols(name.toLowerCase(), match as NameMatch, kind, scope, MAX_CANDIDATES)
    const found: Found[] = []
    for (const row of rows) {
      const shown = shownPath(workspace, row.path)
      if (shown === undefined || (ownerKey !== undefined && row.container?.toLowerCase() !== ownerKey)) continue
      found.push({ ...row, shown })
    }
    found.sort(rank(name))
    const page = paginate(found, offset, pageSize, rows.length >= MAX_CANDIDATES)
    const nextArgs = withoutDefaults({ ...args, offset: undefined }, FindSymbolInput)
    const bodies = withBody ? await Promise.all(page.items.map(async f => await bodyOf(workspace, f, ctx))) : []
    const what = `${match === 'exact' ? '' : `${match} `}"${input}"${kind !== undefined ? ` (${kind})` : ''}${path !== undefined ? ` in ${path}` : ''}`
    const { text, pagination } = await fitPage(page.pagination, (kept, pagination, cut) => {
      const lines = [`# Definitions of ${what} — ${counted(`${found.length}${page.pagination.total_is_lower_bound ? '+' : ''}`, 'match', 'matches')}`, ...notes]
      if (found.length === 0) {
        lines.push(...pruneLines([`No definitions of ${what} in ${counted(codeIndex.status().symbols, 'indexed symbol')}. ${match === 'substring' ? '' : `Try match="${match === 'exact' ? 'prefix' : 'substring'}", or `}search_regex pattern="${name.replace(/[\\"]/g, '\\$&')}" finds it as text.`], ctx.unserved))
      }
      page.items.slice(0, kept).forEach((f, i) => {
        if (!withBody) return lines.push(definitionLine(f))
        lines.push(`## ${definitionLine(f)}`, ...bodies[i])
      })
      if (cut !== undefined) lines.push(cut)
      lines.push(pagingFooter('find_symbol', pagination, nextArgs, 'Definitions'))
      return lines.join('\n')
    }, 'definition', budget, tokenizer, ctx.signal)
    const result: ToolResult = {
      content: [{ type: 'text', text }],
      structuredContent: {
        definitions: page.items.slice(0, pagination.returned).map(f => ({
          path: f.shown, kind: f.kind, name: f.name, ...(f.container !== null ? { container: f.container } : {}), line: f.line, end_line: f.endLine, signature: f.signature
        })),
        pagination
      }
    }
    return result
  }
})
