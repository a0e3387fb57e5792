import { Type } from '@sinclair/typebox'
import { isToolError, toolError } from '../base/errors.js'
import { withNextStep } from '../tool-api/next-step.js'
import { type WorkspaceService, IMAGE_MIMES } from '../services/workspace/index.js'
import type { Tokenizer } from '../services/tokenizer/index.js'
import { defineTool, Inject, type ToolResult } from '../tool-api/define-tool.js'
import { cutLine, MAX_LINE_CHARS, shownInput } from '../tool-kit/format.js'
import { formatBytes } from '../services/byte-size.js'
import { binaryError, nonTextKind, pageRange, pdfNote, readImage, readPdf, type ImageRead } from '../tool-kit/read-nontext.js'
import { imageLine, windowOf, withEncoding } from '../tool-kit/read-window.js'
import { formatCall } from '../tool-kit/paging.js'

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
    media_type: Type.Optional(Type.String({ description: 'Type if not plain text' })),
    pages: Type.Optional(Type.Integer({ description: 'Pages of a PDF' })),
    encoding: Type.Optional(Type.String({ description: 'Legacy charset decoded' })),
    attached: Type.Optional(Type.Boolean({ description: 'Image sent as image content' })),
    error: Type.Optional(Type.String({ description: 'Error code if not read' }))
  }), { description: 'One per requested file, in order' })
})

interface Request { path: string, start_line?: number, end_line?: number, pages?: string, encoding?: string }

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
  /** Some token counts behind the cut are byte bounds (the call's counting cap), not exact. */
  estimated?: boolean
  /** An image file: sent as image content when the budget holds it. */
  image?: ImageRead
  /** Whether the image is attached (false: its tokens did not fit). */
  attached?: boolean
  /** The file's type when it is not plain text (image/png, application/pdf). */
  mediaType?: string
  /** Pages of a PDF. */
  pages?: number
  /** The legacy charset the text was decoded from. */
  charset?: string
}

/**
 * The display cut of a line. A line the reader kept only in part (over its per-line byte cap) is cut at the
 * same 2,000 characters, and says how long the whole line is, in bytes: its character count was never decoded.
 */
function shownLine (line: string, wholeBytes: number | undefined): string {
  if (wholeBytes === undefined) return cutLine(line)
  const code = line.charCodeAt(MAX_LINE_CHARS - 1)
  const head = line.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_LINE_CHARS - 1 : MAX_LINE_CHARS)
  return `${head}… [line cut: ${head.length} chars shown of a ${formatBytes(wholeBytes)} line]`
}

async function readOne (workspace: WorkspaceService, request: Request, index: number, maxLines: number, signal: AbortSignal, unserved: ReadonlySet<string>): Promise<Item> {
  const field = `files[${index}].path`
  const item: Item = { request, shown: shownInput(request.path, `files[${index}]`) }
  try {
    const resolved = await workspace.resolve(request.path, { field, signal })
    item.shown = resolved.requested
    const handle = await workspace.openFile(resolved, field)
    try {
      const { size } = await handle.stat()
      const sniff = await withEncoding(await workspace.sniff(handle), request.encoding, `files[${index}].encoding`)
      const kind = await nonTextKind(sniff)
      const start = request.start_line === undefined || request.start_line === 0 ? 1 : request.start_line
      if (kind?.mime === 'application/pdf') {
        const pdf = await readPdf(handle, size, workspace.pdf, pageRange(request.pages, `files[${index}].pages`), item.shown, signal)
        Object.assign(item, windowOf(pdf.lines, { start, end: request.end_line, maxLines }), { mediaType: kind.mime, pages: pdf.pages, header: pdfNote(pdf, item.shown, size) })
        return item
      }
      if (kind !== undefined && IMAGE_MIMES.has(kind.mime)) {
        item.image = await readImage(handle, size, kind, item.shown)
        item.mediaType = kind.mime
        item.header = `${formatBytes(size)}, ${kind.mime}, ${item.image.width}×${item.image.height}`
        return item
      }
      if (sniff.binary) throw binaryError(item.shown, size, kind)
      const ranged = request.start_line !== undefined || request.end_line !== undefined
      if (!ranged && size > MAX_UNRANGED_BYTES) {
        throw toolError('FILE_TOO_LARGE', `"${item.shown}" is ${formatBytes(size)} (10 MB limit for reads without a range)`,
          `pass a range, e.g. ${formatCall('read_files', { files: [{ path: item.shown, start_line: 1, end_line: 2000 }] })}, or search it with search_regex path="${item.shown}"`)
      }
      const window = await workspace.readLines(handle, size, sniff, { start, end: request.end_line, maxLines, signal })
      item.first = window.first
      item.lines = window.lines.map((line, i) => shownLine(line, window.longLines?.get(i)))
      item.total = window.totalLines
      item.keep = item.lines.length
      const notes = [formatBytes(size)]
      if (sniff.encoding !== 'utf8') notes.push(sniff.encoding === 'utf16le' ? 'UTF-16LE' : 'UTF-16BE')
      if (sniff.charset !== undefined) {
        item.charset = sniff.charset
        notes.push(`${sniff.charset} ${sniff.detected === true ? '(detected; encoding= reads it as another)' : '(as asked)'}`)
      }
      if (window.invalidUtf8) notes.push('invalid UTF-8 shown as \uFFFD')
      item.header = notes.join(', ')
    } finally {
      await handle.close()
    }
  } catch (err) {
    // The workspace raises tool errors only; anything else is a bug for dispatch to mask and log.
    /* c8 ignore next */
    if (!isToolError(err)) throw err
    item.error = { code: err.toolCode, message: withNextStep(err, unserved).message }
  }
  return item
}

// An Item without an error always has first, total, keep and lines (readOne sets them together): the
// `?? default` and undefined arms below are type guards, not paths an answer can take.
function nextStart (item: Item): number | undefined {
  /* c8 ignore next */
  if (item.first === undefined || item.total === undefined || item.keep === undefined) return undefined
  const next = item.first + item.keep
  const end = item.request.end_line === undefined ? item.total : Math.min(item.request.end_line, item.total)
  return next <= end ? next : undefined
}

function render (item: Item, budget: number): string {
  if (item.error !== undefined) return `### ${item.shown}\n${item.error.message}`
  if (item.image !== undefined) return imageLine(item.shown, String(item.header), item.image, item.attached === true, budget)
  /* c8 ignore next 4 */
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
    const estimated = item.estimated === true ? '; sizes estimated from bytes' : ''
    const why = item.cutByBudget === true ? ` (cut to fit max_response_tokens=${budget}${estimated})` : ''
    const call = formatCall('read_files', { files: [{ path: item.shown, start_line: next, end_line: item.request.end_line, pages: item.request.pages, encoding: item.request.encoding }] })
    out.push(`… ${end - next + 1} more lines${why} — next: ${call}`)
  }
  return out.join('\n')
}

/**
 * Attaches images in request order while their estimated tokens fit: all of the budget when only images
 * were asked for, three quarters of it when text shares the call (the text gets what the images leave).
 * Returns the tokens attached.
 */
function attachImages (items: Item[], budget: number): number {
  const withText = items.some(item => item.image === undefined && item.error === undefined)
  const room = withText ? Math.floor(budget * 0.75) : budget
  let used = 0
  for (const item of items) {
    if (item.image === undefined) continue
    item.attached = used + item.image.tokens <= room
    if (item.attached) used += item.image.tokens
  }
  return used
}

/** The entries whose value is set: structuredContent never carries an explicit undefined. */
const defined = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/** Tokens between two items ("\n\n"), counted high. */
const SEPARATOR_TOKENS = 2
/** Slack for the header's and footer's line numbers changing as lines are cut. */
const FRAME_SLACK = 4

/**
 * Tokens of a padded line-number prefix: `width - digits` spaces before the number. Spaces are their own
 * pieces before a digit (p spaces → a run of p-1, then one), so a line costs its unpadded count plus this.
 */
async function paddingCosts (width: number, tokenizer: Tokenizer, signal: AbortSignal): Promise<number[]> {
  const pads = Array.from({ length: width }, (_, p) => ' '.repeat(p) + '0')
  const counted = await tokenizer.countParts(pads, { signal })
  return counted.tokens.map((n, p) => counted.exact[p] ? n - 1 : p)
}

/**
 * Fits one item into `share` tokens: lines are counted exactly, in order, only until the share is passed
 * (never the whole file), then the largest prefix that fits with its header and footer is kept.
 * Returns the tokens it uses.
 */
async function fitItem (item: Item, share: number, budget: number, tokenizer: Tokenizer, signal: AbortSignal): Promise<number> {
  /* c8 ignore next 2 */
  const lines = item.lines ?? []
  const first = item.first ?? 1
  if (item.error !== undefined || lines.length === 0) return tokenizer.count(render(item, budget)) + SEPARATOR_TOKENS
  // Parts "N\tline\n" start with a digit after a line feed: token boundaries, so their counts add up exactly.
  const counted = await tokenizer.countParts(lines.map((line, i) => `${first + i}\t${line}\n`), { signal, limit: share })
  const width = String(first + lines.length - 1).length
  const pads = await paddingCosts(width, tokenizer, signal)
  const digits = (i: number): number => String(first + i).length
  const cost = (k: number): number => {
    const w = String(Math.max(first + k - 1, 1)).length
    let sum = 0
    for (let i = 0; i < k; i++) sum += counted.tokens[i] + pads[w - digits(i)]
    return sum
  }
  const frame = async (k: number): Promise<{ tokens: number, exact: boolean }> => {
    item.keep = k
    const drawn = render(item, budget).split('\n')
    const footer = nextStart(item) !== undefined ? drawn[drawn.length - 1] : ''
    const f = await tokenizer.countParts([`${drawn[0]}\n`, footer], { signal })
    return { tokens: f.tokens[0] + f.tokens[1] + FRAME_SLACK + SEPARATOR_TOKENS, exact: f.exact.every(Boolean) }
  }
  let keep = lines.length
  let framed = await frame(keep)
  if (cost(keep) + framed.tokens > share) {
    item.cutByBudget = true
    let lo = 0
    let hi = lines.length
    const fits = (k: number): boolean => cost(k) + framed.tokens <= share
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2)
      if (fits(mid)) lo = mid
      else hi = mid - 1
    }
    keep = lo
    item.estimated = counted.exact.slice(0, keep).includes(false)
    // The footer of a cut window is longer than none at all: measure the frame that is really drawn.
    framed = await frame(keep)
    while (keep > 0 && !fits(keep)) keep--
    item.keep = keep
    if (!framed.exact) item.estimated = true
  }
  return cost(keep) + framed.tokens
}

/**
 * Shares the token budget fairly: small files whole, the rest split what is left (water-filling).
 * Responses within the byte bound skip the tokenizer; otherwise each file's lines are counted only up to
 * its share, so a 1 MB file costs the BPE about one share of text, not a megabyte.
 */
async function fitBudget (items: Item[], budget: number, room: number, tokenizer: Tokenizer, signal: AbortSignal): Promise<void> {
  const full = items.map(item => render(item, budget)).join('\n\n')
  if (tokenizer.count(full) <= room) return
  const sized = items.map(item => ({ item, bytes: tokenizer.count(render(item, budget)) })).sort((a, b) => a.bytes - b.bytes)
  let remaining = room
  for (let i = 0; i < sized.length; i++) {
    const share = Math.floor(remaining / (sized.length - i))
    remaining -= await fitItem(sized[i].item, share, budget, tokenizer, signal)
  }
}

/** Batch file reader: numbered line windows, continuation footers, one shared token budget. */
export const readFiles = defineTool({
  name: 'read_files',
  title: 'Read Files',
  category: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Read text files with line numbers, whole or by line range — pass several in `files` to read them in one call.\n\n' +
    'Images (PNG, JPEG, GIF, WebP) come back as images, PDFs as their text by pages, legacy encodings decoded. A cut window ends with the exact call that continues it.',
  input: Type.Object({
    files: Type.Array(Type.Object({
      path: Type.String({ minLength: 1, description: 'File path, e.g. "src/app.ts"' }),
      start_line: Type.Optional(Type.Integer({ description: 'First line (1-based; negative counts from the end), e.g. -50' })),
      end_line: Type.Optional(Type.Integer({ minimum: 1, description: 'Last line (inclusive), e.g. 200' })),
      pages: Type.Optional(Type.String({ maxLength: 20, description: 'PDF only: pages to extract text from (default 1–50), e.g. "3-10"' })),
      encoding: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Text encoding when detection guessed wrong, e.g. "shift_jis" or "windows-1252"' }))
    }), { minItems: 1, description: 'Files (1–20), e.g. [{"path": "a.ts", "end_line": 80}]' }),
    max_lines_per_file: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 2000, description: 'Lines per file, e.g. 500' })),
    max_response_tokens: Type.Optional(Type.Integer({ minimum: 1000, maximum: 20000, default: 10000, description: 'Token budget for all files, e.g. 10000' })),
    workspace: Inject('workspace'),
    tokenizer: Inject('tokenizer')
  }),
  output: ReadFilesOutput,
  timeoutHint: 'read fewer files, or a line range (start_line, end_line) of a large one, then call again',
  examples: [
    { comment: 'Two whole files in one call', arguments: { files: [{ path: 'package.json' }, { path: 'src/index.ts' }] } },
    { comment: 'Lines 120–180 of one file', arguments: { files: [{ path: 'src/app.ts', start_line: 120, end_line: 180 }] } },
    { comment: 'The last 50 lines of a log', arguments: { files: [{ path: 'logs/server.log', start_line: -50 }] } }
  ],
  async run (args, { signal, unserved }) {
    const { files, max_lines_per_file: maxLines = 2000, max_response_tokens: budget = 10000, workspace, tokenizer } = args
    if (files.length > MAX_FILES) {
      throw toolError('TOO_MANY_ITEMS', `${files.length} files requested, at most ${MAX_FILES} per call`, `split them into ${Math.ceil(files.length / MAX_FILES)} calls`)
    }
    const items: Item[] = []
    // One at a time: up to 20 whole reads of 10 MB at once would hold 200 MB.
    for (let i = 0; i < files.length; i++) {
      signal.throwIfAborted()
      items.push(await readOne(workspace, files[i], i, maxLines, signal, unserved))
    }
    const imageTokens = attachImages(items, budget)
    await fitBudget(items, budget, budget - imageTokens, tokenizer, signal)

    const text = items.map(item => render(item, budget)).join('\n\n')
    const structured = {
      files: items.map(item => {
        if (item.error !== undefined) return { path: item.shown, error: item.error.code }
        const extra = defined({ media_type: item.mediaType, pages: item.pages, encoding: item.charset, attached: item.image === undefined ? undefined : item.attached })
        if (item.image !== undefined) return { path: item.shown, ...extra }
        const next = nextStart(item)
        return {
          path: item.shown,
          start_line: item.first,
          /* c8 ignore next */
          end_line: (item.first ?? 1) + (item.keep ?? 0) - 1,
          total_lines: item.total,
          ...extra,
          ...(next !== undefined ? { next_start_line: next } : {})
        }
      })
    }
    const images = items.flatMap(item => item.image !== undefined && item.attached === true ? [{ type: 'image' as const, data: item.image.base64, mimeType: item.image.mime }] : [])
    const result: ToolResult = { content: [{ type: 'text', text }, ...images], structuredContent: structured }
    if (items.every(item => item.error !== undefined)) result.isError = true
    return result
  }
})
