import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import type { PathScope } from '../services/code-index/index.js'
import { nameToken, REFERENCE_KINDS, type ReferenceKind } from '../services/symbols/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import { MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS, fitPage } from '../tool-kit/budget.js'
import { indexNotes, INDEX_TASK } from '../tool-kit/code-index-common.js'
import { defineTool, Inject, type ToolContext, type ToolResult } from '../tool-api/define-tool.js'
import { counted, shownInput } from '../tool-kit/format.js'
import { compareText, pageOfCount, pagingFooter, PaginationOutput, withoutDefaults } from '../tool-kit/paging.js'
import { attributor } from '../tool-kit/reference-attribution.js'
import { fallbackSource } from '../tool-kit/reference-fallback.js'
import { containerName, pageFiles, referencePage, renderReferences, type CountedFile, type PageFile } from '../tool-kit/reference-page.js'
import { indexSource, type Definition, type ReferenceSource } from '../tool-kit/reference-source.js'
import { pickDefinitions, splitName, where } from '../tool-kit/definitions.js'

/** structuredContent of find_references: the references on this page. */
export const FindReferencesOutput = Type.Object({
  references: Type.Array(Type.Object({
    path: Type.String(),
    line: Type.Integer(),
    column: Type.Integer({ description: '1-based, in UTF-16 code units' }),
    kind: Type.String({ description: 'call, reference, type, import, export, field or declaration' }),
    container: Type.Optional(Type.String({ description: 'Enclosing definition' })),
    via: Type.Optional(Type.String({ description: 'How it was tied to a definition: same-file, import or name' }))
  }), { description: 'By path, then line' }),
  pagination: PaginationOutput
})

const FindReferencesInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Name used, as the code spells it; "Owner.name" keeps the references tied to that owner\'s definition, e.g. "kmalloc" or "Uploader.send"' }),
  kind: Type.Optional(Type.Union(REFERENCE_KINDS.map(k => Type.Literal(k)), { description: 'Only uses of this kind, e.g. "call"' })),
  path: Type.Optional(Type.String({ description: 'Only references in this file or folder, e.g. "mm"' })),
  definition: Type.Optional(Type.String({ description: 'The definition meant when the name has several, as path or path:line from the list this tool gives, e.g. "include/linux/slab.h:549"' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'References per page, e.g. 50' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_offset of the previous page, e.g. 50' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 8000, description: 'Token budget, e.g. 8000' })),
  workspace: Inject('workspace'),
  codeIndex: Type.Optional(Inject('codeIndex')),
  search: Inject('search'),
  symbols: Inject('symbols'),
  tokenizer: Inject('tokenizer')
})

/** What the answer says about the definitions, and how references were tied to them. */
function definitionNotes (all: readonly Definition[], meant: readonly Definition[] | undefined, name: string): string[] {
  if (all.length === 0) return [`No definition of "${name}" is indexed (it may come from a library, or be made by a macro): these are the uses of the name.`]
  const list = (defs: readonly Definition[]): string => defs.slice(0, 10).map(d => `${where(d)} (${d.kind})`).join(', ') + (defs.length > 10 ? `, and ${defs.length - 10} more` : '')
  if (all.length === 1) return [`Defined at ${list(all)}.`]
  const how = 'Each file\'s references are tied to a definition by: the file that defines it, then (Go, Java) the package folder, then the files that include or import that file directly; a file with none of these ties is kept as naming it only (via name).'
  if (meant === undefined) return [`${all.length} definitions: ${list(all)}.`, how, `Pass definition="${where(all[0])}" (or another) to keep one.`]
  return [`${all.length} definitions; kept: ${list(meant)}.`, how]
}

/**
 * The files using the name that count for this call, sorted as shown. With several definitions and one meant, each
 * file is tied (to keep only the files meaning it); without one meant every file counts, and only the files a page
 * shows are tied (`tiePage`): a name used in 15,000 files does not resolve 15,000 files' includes for 50 lines.
 */
function countedFiles (source: ReferenceSource, name: string, scope: PathScope, kind: ReferenceKind | undefined, all: readonly Definition[], meant: readonly Definition[] | undefined): CountedFile[] {
  const files: CountedFile[] = []
  const found = source.files(name, scope)
  const tying = all.length > 1 && meant !== undefined
  const imports = tying ? source.imports(found.map(f => f.id)) : new Map<number, string[]>()
  const tie = attributor(all)
  for (const file of found) {
    const count = kind === undefined ? Object.values(file.counts).reduce((sum, n) => sum + n, 0) : file.counts[kind] ?? 0
    if (count === 0) continue
    if (!tying) {
      files.push({ ...file, count })
      continue
    }
    // Every file that uses a name has its row of imports (empty when it has none).
    const { meant: ties, via } = tie(file.path, imports.get(file.id) as string[])
    // A file tied to other definitions only is left out; one tied by name alone is kept, marked so.
    if (via !== 'name' && !ties.some(i => meant.includes(all[i]))) continue
    files.push({ ...file, count, via })
  }
  return files.sort((a, b) => compareText(a.shown, b.shown))
}

/** The page's files tied to the definitions, when the name has several and none is meant (countedFiles tied every file then). */
function tiePage (source: ReferenceSource, page: readonly PageFile[], all: readonly Definition[], meant: readonly Definition[] | undefined): readonly PageFile[] {
  if (all.length < 2 || meant !== undefined) return page
  const imports = source.imports(page.map(({ file }) => file.id))
  const tie = attributor(all)
  return page.map(({ file, skip }) => ({ file: { ...file, via: tie(file.path, imports.get(file.id) as string[]).via }, skip }))
}

async function sourceOf (args: { codeIndex?: Parameters<typeof indexSource>[0], workspace: WorkspaceService, search: Parameters<typeof fallbackSource>[2]['search'], symbols: Parameters<typeof fallbackSource>[2]['symbols'] }, name: string, scopeShown: string | undefined, ctx: ToolContext): Promise<{ source: ReferenceSource, notes: string[], lowerBound: boolean }> {
  if (args.codeIndex !== undefined) return { source: indexSource(args.codeIndex, args.workspace), notes: await indexNotes(args.codeIndex, ctx), lowerBound: false }
  const source = await fallbackSource(name, scopeShown, args, ctx.signal)
  const more = source.unparsed > 0 ? `; ${source.unparsed} more ${source.unparsed === 1 ? 'holds it and was' : 'hold it and were'} not (the totals are lower bounds: narrow with path)` : ''
  return { source, notes: [`Note: the code index is off, so the ${counted(source.parsed, 'file')} holding "${name}" ${source.parsed === 1 ? 'was' : 'were'} parsed now${more}.`], lowerBound: source.unparsed > 0 }
}

/** Where a name is used: identifier occurrences by tree-sitter (never comments or strings), from the code index. */
export const findReferences = defineTool({
  name: 'find_references',
  title: 'Find References',
  category: 'search',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Find where a function, type, macro or variable is used — calls, type uses, imports and other references, never comments or strings — grouped by file with the enclosing definition named.\n\n' +
    'Served from the code index (or a parse of the files holding the name when it is off). find_symbol finds the definition; get_call_graph follows calls; search_regex finds any text.',
  input: FindReferencesInput,
  output: FindReferencesOutput,
  task: INDEX_TASK,
  timeoutHint: 'narrow it with path or kind',
  examples: [
    { comment: 'Who uses it?', arguments: { name: 'createServer' } },
    { comment: 'Only the calls, in one folder', arguments: { name: 'kmalloc', kind: 'call', path: 'mm' } }
  ],
  async run (args, ctx) {
    const { name: input, kind, path, definition, page_size: pageSize = 50, offset = 0, max_response_tokens: budget = 8000, workspace, tokenizer } = args
    const { owner, name } = splitName(input.trim())
    if (nameToken(name) === undefined) {
      throw toolError('INVALID_ARGUMENT', `name: "${shownInput(input, 'name')}" is not a name as code spells one (letters, digits, _ and $)`, 'pass an identifier, e.g. name="kmalloc"; search_regex finds any other text')
    }
    const resolved = path === undefined ? undefined : await workspace.resolve(path, { field: 'path', signal: ctx.signal })
    const scope = resolved === undefined || resolved.relative === '.' ? undefined : String(resolved.fsPath)
    const { source, notes, lowerBound } = await sourceOf(args, name, scope === undefined ? undefined : resolved?.relative, ctx)
    const all = source.definitions(name)
    let meant = definition === undefined ? undefined : pickDefinitions(definition, all, name)
    if (owner !== undefined) {
      meant = (meant ?? all).filter(d => d.container === owner)
      if (meant.length === 0) throw toolError('INVALID_ARGUMENT', `name: no definition of "${name}" belongs to "${owner}"`, `find_symbol name="${name}" lists its definitions and their owners`)
    }
    const files = countedFiles(source, name, scope, kind, all, meant)
    const total = files.reduce((sum, f) => sum + f.count, 0)
    // The pagination counts references, not files; only the files this page touches are read.
    const page = pageOfCount(total, offset, pageSize, lowerBound)
    const touched = tiePage(source, pageFiles(files, page.offset, page.page_size), all, meant)
    const references = await referencePage(source, name, touched, kind, page.page_size, workspace, ctx.signal)
    const perFile = new Map(files.map(f => [f.shown, f.count]))
    const nextArgs = withoutDefaults({ ...args, offset: undefined }, FindReferencesInput)
    const what = `${kind === undefined ? '' : `${kind} `}references to "${input}"${path === undefined ? '' : ` in ${path}`}`
    const { text, pagination } = await fitPage({ ...page, returned: references.length }, (kept, pagination, cut) => {
      const lines = [`# ${what[0].toUpperCase()}${what.slice(1)} — ${total}${lowerBound ? '+' : ''} in ${counted(files.length, 'file')}`, ...notes, ...definitionNotes(all, meant, name)]
      if (total === 0) lines.push(`No indexed file uses "${name}"${kind === undefined ? '' : ` as a ${kind}`}. search_regex pattern="${name.replace(/\$/g, '\\$')}" finds it as text (comments and strings too).`)
      lines.push(...renderReferences(references.slice(0, kept), perFile))
      if (cut !== undefined) lines.push(cut)
      lines.push(pagingFooter('find_references', pagination, nextArgs, 'References'))
      return lines.join('\n')
    }, 'reference', budget, tokenizer, ctx.signal)
    const result: ToolResult = {
      content: [{ type: 'text', text }],
      structuredContent: {
        references: references.slice(0, pagination.returned).map(r => ({
          path: r.path, line: r.line, column: r.column, kind: r.kind, ...(r.container === undefined ? {} : { container: containerName(r.container) }), ...(r.via === undefined ? {} : { via: r.via })
        })),
        pagination
      }
    }
    return result
  }
})
