import { Type } from '@sinclair/typebox'
import { isToolError, toolError } from '../errors.js'
import type { WorkspaceService } from '../services/workspace.js'
import type { Tokenizer } from '../services/tokenizer.js'
import { defineTool, Inject, type ToolResult } from './define-tool.js'
import { cutLine, formatBytes, languageOf, shownInput } from './format.js'
import { formatCall } from './paging.js'

/** Files per call; more is TOO_MANY_ITEMS. */
const MAX_FILES = 20
/** Unranged reads of files over this size are FILE_TOO_LARGE (ranged reads stream). */
const MAX_UNRANGED_BYTES = 10 * 1024 * 1024

/** structuredContent of read_files: where each window sits, never the text itself. */
export const ReadFilesOutput = Type.Object({
  files: Type.Array(Type.Object({
    path: Type.String({ description: 'Path as requested' }),
    start_line: Type.Optional(Type.Integer({ description: 'First line shown' })),
    end_line: Type.Optional(Type.Integer({ description: 'Last line shown' })),
    total_lines: Type.Optional(Type.Integer({ description: 'Lines in the file' })),
    next_start_line: Type.Optional(Type.Integer({ description: 'start_line that continues it' })),
    error: Type.Optional(Type.String({ description: 'Error code if not read' }))
  }), { description: 'One per requested file, in order' })
})

interface Request { path: string, start_line?: number, end_line?: number }

interface Item {
  request: Request
  shown: string
  error?: { code: string, message: string }
  header?: string
  first?: number
  lines?: string[]
  total?: number
  /** Lines kept after budgeting (≤ lines.length). */
  keep?: number
  cutByBudget?: boolean
}

async function readOne (workspace: WorkspaceService, request: Request, index: number, maxLines: number, signal: AbortSignal): Promise<Item> {
  const field = `files[${index}].path`
  const item: Item = { request, shown: shownInput(request.path, `files[${index}]`) }
  try {
    const resolved = await workspace.resolve(request.path, { field })
    item.shown = resolved.requested
    const handle = await workspace.openFile(resolved, field)
    try {
      const { size } = await handle.stat()
      const sniff = await workspace.sniff(handle)
      if (sniff.binary) {
        const kind = languageOf(resolved.relative)
        throw toolError('BINARY_FILE', `"${item.shown}" is binary (${size} bytes${kind !== '' ? `, ${kind} by extension` : ''}); not shown as text`, `get_file_info paths=["${item.shown}"] describes it`)
      }
      const ranged = request.start_line !== undefined || request.end_line !== undefined
      if (!ranged && size > MAX_UNRANGED_BYTES) {
        throw toolError('FILE_TOO_LARGE', `"${item.shown}" is ${formatBytes(size)} (10 MB limit for reads without a range)`,
          `pass a range, e.g. ${formatCall('read_files', { files: [{ path: item.shown, start_line: 1, end_line: 2000 }] })}, or search it with search_regex path="${item.shown}"`)
      }
      const start = request.start_line === undefined || request.start_line === 0 ? 1 : request.start_line
      const window = await workspace.readLines(handle, size, sniff, { start, end: request.end_line, maxLines, signal })
      item.first = window.first
      item.lines = window.lines.map(l => cutLine(l))
      item.total = window.totalLines
      item.keep = item.lines.length
      const notes = [formatBytes(size)]
      if (sniff.encoding !== 'utf8') notes.push(sniff.encoding === 'utf16le' ? 'UTF-16LE' : 'UTF-16BE')
      if (window.invalidUtf8) notes.push('invalid UTF-8 shown as \uFFFD')
      item.header = notes.join(', ')
    } finally {
      await handle.close()
    }
  } catch (err) {
    if (!isToolError(err)) throw err
    item.error = { code: err.toolCode, message: err.message }
  }
  return item
}

function nextStart (item: Item): number | undefined {
  if (item.first === undefined || item.total === undefined || item.keep === undefined) return undefined
  const next = item.first + item.keep
  const end = item.request.end_line === undefined ? item.total : Math.min(item.request.end_line, item.total)
  return next <= end ? next : undefined
}

function render (item: Item, budget: number): string {
  if (item.error !== undefined) return `### ${item.shown}\n${item.error.message}`
  const lines = item.lines ?? []
  const keep = item.keep ?? 0
  const first = item.first ?? 1
  const total = item.total ?? 0
  const last = first + keep - 1
  const out: string[] = []
  if (total === 0) out.push(`### ${item.shown} — empty file (${item.header})`)
  else if (lines.length === 0) out.push(`### ${item.shown} — no lines from ${first} (the file has ${total} lines; ${item.header})`)
  else if (keep === 0) out.push(`### ${item.shown} — no lines shown: the token budget ran out (${total} lines; ${item.header})`)
  else out.push(`### ${item.shown} — lines ${first}–${last} of ${total} (${item.header})`)
  const width = String(Math.max(last, 1)).length
  for (let i = 0; i < keep; i++) out.push(`${String(first + i).padStart(width)}\t${lines[i]}`)
  const next = nextStart(item)
  if (next !== undefined) {
    const end = item.request.end_line === undefined ? total : Math.min(item.request.end_line, total)
    const why = item.cutByBudget === true ? ` (cut to fit max_response_tokens=${budget})` : ''
    const call = formatCall('read_files', { files: [{ path: item.shown, start_line: next, end_line: item.request.end_line }] })
    out.push(`… ${end - next + 1} more lines${why} — next: ${call}`)
  }
  return out.join('\n')
}

/**
 * Shares the token budget fairly: small files whole, the rest split what is left (water-filling).
 * Responses within the byte bound skip the tokenizer; otherwise exact counts run on its worker thread.
 */
async function fitBudget (items: Item[], budget: number, tokenizer: Tokenizer): Promise<void> {
  const draw = (item: Item): string => render(item, budget)
  const full = items.map(draw).join('\n\n')
  if (tokenizer.count(full) <= budget || await tokenizer.countExact(full) <= budget) return
  const counts = await Promise.all(items.map(item => tokenizer.countExact(draw(item))))
  const sized = items.map((item, i) => ({ item, tokens: counts[i] + 2 })).sort((a, b) => a.tokens - b.tokens)
  let remaining = budget
  for (let i = 0; i < sized.length; i++) {
    const { item, tokens } = sized[i]
    const share = Math.floor(remaining / (sized.length - i))
    if (tokens <= share || item.lines === undefined || item.lines.length === 0) {
      remaining -= tokens
      continue
    }
    item.cutByBudget = true
    const perChar = tokens / Math.max(1, draw(item).length)
    const reserve = 80 + item.shown.length
    let keep = 0
    let chars = 0
    while (keep < item.lines.length && (chars + item.lines[keep].length + 8) * perChar <= share - reserve) chars += item.lines[keep++].length + 8
    item.keep = keep
    let used = await tokenizer.countExact(draw(item))
    for (let round = 0; round < 8 && item.keep > 0 && used > share; round++) {
      item.keep = Math.floor(item.keep * 0.8)
      used = await tokenizer.countExact(draw(item))
    }
    remaining -= used + 2
  }
}

/** Batch file reader: numbered line windows, continuation footers, one shared token budget. */
export const readFiles = defineTool({
  name: 'read_files',
  title: 'Read Files',
  category: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Read text files with line numbers, whole or by line range — pass several in `files` to read them in one call.\n\n' +
    'A cut window ends with the exact call that continues it.',
  input: Type.Object({
    files: Type.Array(Type.Object({
      path: Type.String({ minLength: 1, description: 'File path, e.g. "src/app.ts"' }),
      start_line: Type.Optional(Type.Integer({ description: 'First line (1-based; negative counts from the end), e.g. -50' })),
      end_line: Type.Optional(Type.Integer({ minimum: 1, description: 'Last line (inclusive), e.g. 200' }))
    }), { minItems: 1, description: 'Files (1–20), e.g. [{"path": "a.ts", "end_line": 80}]' }),
    max_lines_per_file: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 2000, description: 'Lines per file, e.g. 500' })),
    max_response_tokens: Type.Optional(Type.Integer({ minimum: 1000, maximum: 20000, default: 10000, description: 'Token budget for all files, e.g. 10000' })),
    workspace: Inject('workspace'),
    tokenizer: Inject('tokenizer')
  }),
  output: ReadFilesOutput,
  examples: [
    { comment: 'Two whole files in one call', arguments: { files: [{ path: 'package.json' }, { path: 'src/index.ts' }] } },
    { comment: 'Lines 120–180 of one file', arguments: { files: [{ path: 'src/app.ts', start_line: 120, end_line: 180 }] } },
    { comment: 'The last 50 lines of a log', arguments: { files: [{ path: 'logs/server.log', start_line: -50 }] } }
  ],
  async run (args, { signal }) {
    const { files, max_lines_per_file: maxLines = 2000, max_response_tokens: budget = 10000, workspace, tokenizer } = args
    if (files.length > MAX_FILES) {
      throw toolError('TOO_MANY_ITEMS', `${files.length} files requested, at most ${MAX_FILES} per call`, `split them into ${Math.ceil(files.length / MAX_FILES)} calls`)
    }
    const items: Item[] = []
    // One at a time: up to 20 whole reads of 10 MB at once would hold 200 MB.
    for (let i = 0; i < files.length; i++) items.push(await readOne(workspace, files[i], i, maxLines, signal))
    await fitBudget(items, budget, tokenizer)

    const text = items.map(item => render(item, budget)).join('\n\n')
    const structured = {
      files: items.map(item => {
        if (item.error !== undefined) return { path: item.shown, error: item.error.code }
        const next = nextStart(item)
        return {
          path: item.shown,
          start_line: item.first,
          end_line: (item.first ?? 1) + (item.keep ?? 0) - 1,
          total_lines: item.total,
          ...(next !== undefined ? { next_start_line: next } : {})
        }
      })
    }
    const result: ToolResult = { content: [{ type: 'text', text }], structuredContent: structured }
    if (items.every(item => item.error !== undefined)) result.isError = true
    return result
  }
})
