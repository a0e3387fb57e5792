import { Type } from '@sinclair/typebox'
import { isToolError, toolError } from '../base/errors.js'
import { withNextStep } from '../tool-api/next-step.js'
import { pruneMentions } from '../services/prune-mentions.js'
import type { InspectedPath, WorkspaceService } from '../services/workspace/index.js'
import { defineTool, Inject, type ToolResult } from '../tool-api/define-tool.js'
import { counted, languageOf, shownInput } from '../tool-kit/format.js'
import { formatBytes } from '../services/byte-size.js'
import { nonTextKind } from '../tool-kit/read-nontext.js'

/** Paths per call; more is TOO_MANY_ITEMS. */
const MAX_PATHS = 100
/** Lines are counted (by streaming) only for text files up to this size. */
const MAX_COUNT_BYTES = 10 * 1024 * 1024

/** structuredContent of get_file_info: one fact sheet per path. */
export const GetFileInfoOutput = Type.Object({
  items: Type.Array(Type.Object({
    path: Type.String({ description: 'Path as requested' }),
    type: Type.Optional(Type.String({ description: 'file, dir, symlink, fifo …' })),
    size: Type.Optional(Type.Integer({ description: 'Bytes' })),
    lines: Type.Optional(Type.Integer({ description: 'Lines (text ≤ 10 MB)' })),
    binary: Type.Optional(Type.Boolean({ description: 'NUL in first 8 KiB' })),
    media_type: Type.Optional(Type.String({ description: 'Type by magic bytes' })),
    encoding: Type.Optional(Type.String({ description: 'Legacy charset detected' })),
    gitignored: Type.Optional(Type.Boolean({ description: 'Matched by ignore rules' })),
    link_target: Type.Optional(Type.String({ description: 'Link target or "outside workspace"' })),
    error: Type.Optional(Type.String({ description: 'Error code if unknown' }))
  }), { description: 'One per requested path, in order' })
})

type Info = Record<string, unknown> & { path: string }

/** What read_files would do with a file: binary or text (and its charset), its media type, its lines — all from its descriptor. */
async function fileFacts (workspace: WorkspaceService, handle: NonNullable<InspectedPath['handle']>, size: number, info: Info, signal?: AbortSignal): Promise<void> {
  const sniff = await workspace.sniff(handle)
  info.binary = sniff.binary
  // What read_files would do with it: an image, a PDF's text, a refusal that names the type.
  const kind = await nonTextKind(sniff)
  if (kind !== undefined) info.media_type = kind.mime
  if (sniff.charset !== undefined) info.encoding = sniff.charset
  if (kind?.mime === 'application/pdf') {
    info.note = 'its text comes by pages; read_files returns it'
    return
  }
  if (!sniff.binary && size <= MAX_COUNT_BYTES) info.lines = await workspace.countLines(handle, size, signal, sniff.encoding)
  else if (!sniff.binary) info.note = 'over 10 MB: lines not counted; read_files with start_line/end_line reads a window'
}

async function describe (workspace: WorkspaceService, path: string, field: string, signal?: AbortSignal): Promise<Info> {
  // Every fact below comes from what inspect opened (the descriptor's fstat, lines read from it), not a second lookup.
  const seen = await workspace.inspect(path, field, signal)
  try {
    const info: Info = { path: seen.relative, type: seen.kind, size: seen.stats.size, mtime: new Date(seen.stats.mtimeMs).toISOString() }
    info.gitignored = await workspace.isIgnored(seen.relative, seen.kind === 'dir')
    if (seen.kind === 'file') {
      const language = languageOf(seen.relative)
      if (language !== '') info.language = language
      if (seen.handle !== undefined) await fileFacts(workspace, seen.handle, seen.stats.size, info, signal)
      else info.note = seen.refused === 'PERMISSION_DENIED' ? 'not readable: permission denied' : `not readable: ${String(seen.refused)}`
    } else if (seen.kind === 'dir') {
      if (seen.entries !== undefined) info.entries = seen.entries
      else info.note = 'not listable: permission denied'
    } else if (seen.link !== undefined) {
      const link = seen.link
      info.link_target = link.state === 'inside' ? link.relative : link.state === 'outside' ? 'outside workspace' : link.state
      if (link.state === 'inside') info.note = `link to a ${link.kind}`
    }
    return info
  } finally {
    await seen.handle?.close()
  }
}

const STRUCTURED_KEYS = ['path', 'type', 'size', 'lines', 'binary', 'media_type', 'encoding', 'gitignored', 'link_target', 'error']

/** The structuredContent view: the output schema's keys only (mtime, language, notes stay in the text). */
function structured (info: Info): Record<string, unknown> {
  return Object.fromEntries(STRUCTURED_KEYS.filter(k => info[k] !== undefined).map(k => [k, info[k]]))
}

function line (info: Info): string {
  if (typeof info.message === 'string') return `${info.path} — ${info.message}`
  const parts: string[] = []
  const type = info.type === 'dir' ? 'directory' : String(info.type)
  if (info.type === 'symlink') parts.push(`symlink -> ${String(info.link_target)}${info.link_target === 'outside workspace' ? ' (not followed)' : ''}`)
  else parts.push(type)
  if (info.type === 'file') parts.push(formatBytes(info.size as number))
  if (typeof info.lines === 'number') parts.push(counted(info.lines, 'line'))
  if (typeof info.media_type === 'string') parts.push(info.media_type)
  if (info.binary === true) parts.push('binary')
  else if (info.binary === false) parts.push(typeof info.encoding === 'string' ? `text in ${info.encoding}` : 'text')
  if (typeof info.language === 'string') parts.push(info.language)
  if (typeof info.entries === 'number') parts.push(counted(info.entries, 'entry'))
  if (['fifo', 'socket', 'device', 'other'].includes(String(info.type))) parts.push('not a regular file')
  if (info.gitignored === true) parts.push('gitignored')
  if (typeof info.note === 'string') parts.push(info.note)
  parts.push(`modified ${String(info.mtime)}`)
  return `${info.path} — ${parts.join(', ')}`
}

/** Batch stat: type, size, lines, binary, language, ignore status and link target per path. */
export const getFileInfo = defineTool({
  name: 'get_file_info',
  title: 'Get File Info',
  category: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Get type, size, line count, binary and gitignore status of paths before reading them — pass several in `paths` to check them in one call.\n\n' +
    'read_files reads them; list_directory lists a folder. Links are never followed.',
  input: Type.Object({
    paths: Type.Array(Type.String({ minLength: 1, description: 'A path, e.g. "src/app.ts"' }), { minItems: 1, description: 'Paths (1–100), e.g. ["package.json", "src"]' }),
    workspace: Inject('workspace')
  }),
  output: GetFileInfoOutput,
  timeoutHint: 'ask about fewer paths per call, then call again',
  examples: [
    { comment: 'Check sizes before reading', arguments: { paths: ['package.json', 'src/index.ts'] } },
    { comment: 'Is this big file text, and is it ignored?', arguments: { paths: ['data/dump.sql'] } }
  ],
  async run ({ paths, workspace }, { signal, unserved }) {
    if (paths.length > MAX_PATHS) {
      throw toolError('TOO_MANY_ITEMS', `${paths.length} paths given, at most ${MAX_PATHS} per call`, `split them into ${Math.ceil(paths.length / MAX_PATHS)} calls`)
    }
    const items: Info[] = []
    for (let i = 0; i < paths.length; i++) {
      // A timed-out or cancelled call stops here: its answer is no longer awaited, so no more work is done for it.
      signal.throwIfAborted()
      try {
        const info = await describe(workspace, paths[i], `paths[${i}]`, signal)
        // A note suggests read_files: not where it is not served.
        items.push(typeof info.note === 'string' ? { ...info, note: pruneMentions(info.note, unserved) } : info)
      } catch (err) {
        // Unexpected errors go to dispatch, which masks and logs them with a ref; describe raises none today.
        /* c8 ignore next */
        if (!isToolError(err)) throw err
        items.push({ path: shownInput(paths[i], `paths[${i}]`), error: err.toolCode, message: withNextStep(err, unserved).message })
      }
    }
    const result: ToolResult = { content: [{ type: 'text', text: items.map(line).join('\n') }], structuredContent: { items: items.map(structured) } }
    if (items.every(item => item.error !== undefined)) result.isError = true
    return result
  }
})
