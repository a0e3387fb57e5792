import { Type } from '@sinclair/typebox'
import { isToolError, toolError } from '../errors.js'
import type { InspectedPath, WorkspaceService } from '../services/workspace.js'
import { defineTool, Inject, type ToolResult } from './define-tool.js'
import { formatBytes, languageOf, shownInput } from './format.js'

/** Paths per call; more is TOO_MANY_ITEMS. */
const MAX_PATHS = 100
/** Lines are counted (by streaming) only for text files up to this size. */
const MAX_COUNT_BYTES = 10 * 1024 * 1024

/** structuredContent of get_file_info: one fact sheet per path. */
export const GetFileInfoOutput = Type.Object({
  items: Type.Array(Type.Object({
    path: Type.String({ description: 'The path as requested, relative to the root, e.g. "src/app.ts"' }),
    type: Type.Optional(Type.String({ description: 'file, dir, symlink, fifo, socket, device or other, e.g. "file"' })),
    size: Type.Optional(Type.Integer({ description: 'Size in bytes (of the link itself for links), e.g. 4096' })),
    mtime: Type.Optional(Type.String({ description: 'Last modification, ISO 8601, e.g. "2026-01-31T12:00:00.000Z"' })),
    lines: Type.Optional(Type.Integer({ description: 'Line count of a text file up to 10 MB, e.g. 120' })),
    binary: Type.Optional(Type.Boolean({ description: 'True when the file holds a NUL byte in its first 8 KiB' })),
    language: Type.Optional(Type.String({ description: 'Language guessed from the extension, e.g. "TypeScript"' })),
    gitignored: Type.Optional(Type.Boolean({ description: 'True when .gitignore/.ignore rules match the path' })),
    entries: Type.Optional(Type.Integer({ description: 'Entries in a directory, e.g. 12' })),
    link_target: Type.Optional(Type.String({ description: 'Where a link points, relative to the root, or "outside workspace", "broken", "loop", e.g. "src/real.ts"' })),
    note: Type.Optional(Type.String({ description: 'What could not be determined and why, e.g. "not readable: permission denied"' })),
    error: Type.Optional(Type.Object({
      code: Type.String({ description: 'Stable error code, e.g. "PATH_NOT_FOUND"' }),
      message: Type.String({ description: 'The full error line, e.g. "ERROR PATH_NOT_FOUND: …"' })
    }, { description: 'Why nothing is known about this path, e.g. {"code":"PATH_OUTSIDE_ROOT"}' }))
  }), { description: 'One entry per requested path, in request order' })
})

type Info = Record<string, unknown> & { path: string }

async function fileFacts (workspace: WorkspaceService, seen: InspectedPath, info: Info): Promise<void> {
  const resolved = { relative: seen.relative, absolute: '', fsPath: seen.fsPath, requested: seen.relative }
  let handle
  try {
    handle = await workspace.openFile(resolved)
  } catch (err) {
    if (!isToolError(err)) throw err
    info.note = err.toolCode === 'PERMISSION_DENIED' ? 'not readable: permission denied' : `not readable: ${err.toolCode}`
    return
  }
  try {
    const sniff = await workspace.sniff(handle)
    info.binary = sniff.binary
    if (!sniff.binary && seen.stats.size <= MAX_COUNT_BYTES) info.lines = await workspace.countLines(handle, seen.stats.size)
    else if (!sniff.binary) info.note = 'over 10 MB: lines not counted; read_files with start_line/end_line reads a window'
  } finally {
    await handle.close()
  }
}

async function describe (workspace: WorkspaceService, path: string, field: string): Promise<Info> {
  const seen = await workspace.inspect(path, field)
  const info: Info = { path: seen.relative, type: seen.kind, size: seen.stats.size, mtime: new Date(seen.stats.mtimeMs).toISOString() }
  info.gitignored = await workspace.isIgnored(seen.relative, seen.kind === 'dir')
  if (seen.kind === 'file') {
    const language = languageOf(seen.relative)
    if (language !== '') info.language = language
    await fileFacts(workspace, seen, info)
  } else if (seen.kind === 'dir') {
    try {
      info.entries = (await workspace.readDirectory(seen)).length
    } catch (err) {
      info.note = `not listable: ${workspace.fsError(err, seen.relative).message.split(':')[0].replace('ERROR ', '')}`
    }
  } else if (seen.link !== undefined) {
    const link = seen.link
    info.link_target = link.state === 'inside' ? link.relative : link.state === 'outside' ? 'outside workspace' : link.state
    if (link.state === 'inside') info.note = `link to a ${link.kind}`
  }
  return info
}

function line (info: Info): string {
  const error = info.error as { message: string } | undefined
  if (error !== undefined) return `${info.path} — ${error.message}`
  const parts: string[] = []
  const type = info.type === 'dir' ? 'directory' : String(info.type)
  if (info.type === 'symlink') parts.push(`symlink -> ${String(info.link_target)}${info.link_target === 'outside workspace' ? ' (not followed)' : ''}`)
  else parts.push(type)
  if (info.type === 'file') parts.push(formatBytes(info.size as number))
  if (typeof info.lines === 'number') parts.push(`${info.lines} ${info.lines === 1 ? 'line' : 'lines'}`)
  if (info.binary === true) parts.push('binary')
  else if (info.binary === false) parts.push('text')
  if (typeof info.language === 'string') parts.push(info.language)
  if (typeof info.entries === 'number') parts.push(`${info.entries} ${info.entries === 1 ? 'entry' : 'entries'}`)
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
  description: 'Get type, size, line count, binary and gitignore status of files or folders before reading them — pass several in `paths` to check them in one call.\n\n' +
    'Then read_files reads the text and list_directory lists a folder. Links are described, never followed; a link out of the workspace shows as "outside workspace".',
  input: Type.Object({
    paths: Type.Array(Type.String({ minLength: 1, description: 'A path relative to the workspace root, e.g. "src/app.ts"' }), { minItems: 1, description: 'Paths to describe (1–100), e.g. ["package.json", "src", "dist/bundle.js"]' }),
    workspace: Inject('workspace')
  }),
  output: GetFileInfoOutput,
  examples: [
    { comment: 'Check sizes before reading', arguments: { paths: ['package.json', 'src/index.ts'] } },
    { comment: 'Is this big file text, and is it ignored?', arguments: { paths: ['data/dump.sql'] } }
  ],
  async run ({ paths, workspace }) {
    if (paths.length > MAX_PATHS) {
      throw toolError('TOO_MANY_ITEMS', `${paths.length} paths given, at most ${MAX_PATHS} per call`, `split them into ${Math.ceil(paths.length / MAX_PATHS)} calls`)
    }
    const items: Info[] = []
    for (let i = 0; i < paths.length; i++) {
      try {
        items.push(await describe(workspace, paths[i], `paths[${i}]`))
      } catch (err) {
        if (!isToolError(err)) throw err
        items.push({ path: shownInput(paths[i], `paths[${i}]`), error: { code: err.toolCode, message: err.message } })
      }
    }
    const result: ToolResult = { content: [{ type: 'text', text: items.map(line).join('\n') }], structuredContent: { items } }
    if (items.every(item => item.error !== undefined)) result.isError = true
    return result
  }
})
