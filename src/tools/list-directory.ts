import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import type { WalkEntry } from '../services/workspace/index.js'
import { defineTool, Inject, textResult } from '../tool-api/define-tool.js'
import { counted } from '../tool-kit/format.js'
import { formatBytes } from '../services/byte-size.js'
import { formatCall, paginate, pagingFooter, PaginationOutput } from '../tool-kit/paging.js'
import { ignoredNotice } from '../tool-kit/ignored-notice.js'

/** Most entries one listing walks before it stops (the total is then a lower bound). */
const MAX_WALK_ENTRIES = 50_000

/** structuredContent of list_directory: locations and pagination only. */
export const ListDirectoryOutput = Type.Object({
  path: Type.String({ description: 'Listed folder' }),
  entries: Type.Array(Type.String(), { description: 'Paths on this page; folders end in /' }),
  pagination: PaginationOutput
})

function linkText (entry: WalkEntry): string {
  const link = entry.link
  // list_directory walks with resolveLinks, so every link has a target state; a guard.
  /* c8 ignore next */
  if (link === undefined) return '[link]'
  if (link.state === 'inside') return link.relative + (link.kind === 'dir' ? '/' : '')
  return link.state === 'outside' ? '[link, outside workspace]' : `[link, ${link.state}]`
}

/**
 * How an entry is shown: a direct child by its path (copyable as is), a deeper one by its name, indented
 * under its folder, so depth=2 does not repeat the folder's path on every line.
 */
function shownName (e: WalkEntry): string {
  return e.depth <= 1 ? e.relative : `${'  '.repeat(e.depth - 1)}${e.name}`
}

/**
 * A page that starts inside a folder first repeats that folder's line (and its parents'), marked continued.
 * The listing is in pre-order, so a folder is the nearest entry before `start` that is one level up.
 */
function continuedFolders (entries: WalkEntry[], start: number): string[] {
  const lines: string[] = []
  let depth = entries[start]?.depth ?? 1
  for (let i = start - 1; i >= 0 && depth > 1; i--) {
    if (entries[i].depth !== depth - 1) continue
    depth--
    lines.unshift(`${shownName(entries[i])}/  (continued)`)
  }
  return lines
}

function entryLine (e: WalkEntry, showMtime: boolean): string {
  const when = showMtime && e.mtimeMs > 0 ? `  ${new Date(e.mtimeMs).toISOString()}` : ''
  switch (e.kind) {
    case 'dir': {
      const note = e.ignored === true
        ? '  (ignored, not expanded)'
        // A folder this process cannot read: root reads everything, so the permission tests run the bin as nobody.
        /* c8 ignore next */
        : e.unreadable !== undefined ? `  (unreadable: ${e.unreadable})` : e.childCount !== undefined ? `  (${counted(e.childCount, 'entry')})` : ''
      return `${shownName(e)}/${note}${when}`
    }
    case 'file': return `${shownName(e)}  ${formatBytes(e.size)}${when}`
    case 'symlink': return `${shownName(e)} -> ${linkText(e)}`
    default: return `${shownName(e)}  [${e.kind}]`
  }
}

/** Directory listing: depth-limited, ignore-aware, links shown but never followed. */
export const listDirectory = defineTool({
  name: 'list_directory',
  title: 'List Directory',
  category: 'navigation',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'List a workspace folder with sizes, up to 5 levels deep; hidden and gitignored entries are skipped by default.\n\n' +
    'find_files finds files by name anywhere. Links show their target and are never followed.',
  input: Type.Object({
    path: Type.Optional(Type.String({ default: '.', description: 'Folder relative to the root, e.g. "src"' })),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, default: 1, description: 'Levels to list, e.g. 2' })),
    include_hidden: Type.Optional(Type.Boolean({ default: false, description: 'Include dot-files and dot-folders' })),
    respect_gitignore: Type.Optional(Type.Boolean({ default: true, description: 'Skip .gitignore/.ignore matches' })),
    sort: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('mtime'), Type.Literal('size')], { default: 'name', description: 'Order after folders: name, mtime or size (largest first)' })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200, description: 'Entries per page, e.g. 200' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_offset of the previous page, e.g. 200' })),
    workspace: Inject('workspace')
  }),
  output: ListDirectoryOutput,
  timeoutHint: 'list a smaller path or a lower depth (a smaller page_size does not shorten the walk), then call again',
  examples: [
    { comment: 'The top level of the workspace', arguments: {} },
    { comment: 'Two levels of src, newest first', arguments: { path: 'src', depth: 2, sort: 'mtime' } },
    { comment: 'Everything, including dot-files and ignored entries', arguments: { path: '.', include_hidden: true, respect_gitignore: false } }
  ],
  async run (args, { signal }) {
    const { path = '.', depth = 1, include_hidden: includeHidden = false, respect_gitignore: respectGitignore = true, sort = 'name', page_size: pageSize = 200, offset = 0, workspace } = args
    const dir = await workspace.resolve(path, { field: 'path' })
    const stats = await workspace.stat(dir)
    if (!stats.isDirectory()) {
      throw toolError('NOT_A_DIRECTORY', `path: "${dir.requested}" is a file, not a directory`, `read it with read_files files=[{"path":"${dir.requested}"}], or get_file_info paths=["${dir.requested}"]`)
    }
    const walked = await workspace.walk({
      start: dir,
      maxDepth: depth,
      includeHidden,
      respectGitignore,
      showIgnoredDirs: true,
      countAtLimit: true,
      resolveLinks: true,
      maxEntries: MAX_WALK_ENTRIES,
      sort,
      signal
    })
    const page = paginate(walked.entries, offset, pageSize, walked.truncated)
    const nextArgs = {
      path: dir.requested,
      depth: depth !== 1 ? depth : undefined,
      include_hidden: includeHidden ? true : undefined,
      respect_gitignore: respectGitignore ? undefined : false,
      sort: sort !== 'name' ? sort : undefined,
      page_size: pageSize !== 200 ? pageSize : undefined
    }
    const notices = [...walked.notes]
    if (walked.skippedHidden > 0) notices.push(`${counted(walked.skippedHidden, 'hidden entry', 'hidden entries')} not shown (include_hidden=true shows them)`)
    const unexpanded = walked.entries.filter(e => e.ignored === true).length
    const left = [
      ...(walked.skippedIgnored > 0 ? [`${counted(walked.skippedIgnored, 'gitignored entry', 'gitignored entries')} not shown`] : []),
      ...(unexpanded > 0 ? [`${counted(unexpanded, 'ignored folder')} not expanded`] : [])
    ].join(' and ')
    // Most of the folder hidden is the unpacked-tarball case: say it first, not as a footnote.
    const most = walked.skippedIgnored + unexpanded > walked.entries.length - unexpanded ? 'most of this folder is excluded by ignore rules: ' : ''
    const ignored = await ignoredNotice(workspace, walked.firstIgnoredFile ?? walked.firstIgnoredDir, `${most}${left}`, formatCall('list_directory', { ...nextArgs, respect_gitignore: false }))
    if (ignored !== undefined) notices.push(ignored)
    if (page.items.length === 0 && walked.entries.length > 0) notices.push(`offset ${offset} is past the end (${counted(walked.entries.length, 'entry')}); use offset=0`)

    const shown = dir.requested === dir.relative ? dir.relative : `${dir.requested} (-> ${dir.relative})`
    const lines = [`# ${shown} — ${counted(`${walked.entries.length}${walked.truncated ? '+' : ''}`, 'entry')} (depth ${depth}${depth > 1 ? ', deeper entries indented under their folder' : ''}, by ${sort}, directories first)`]
    for (const notice of notices) lines.push(`Note: ${notice}`)
    if (walked.entries.length === 0) lines.push('(empty)')
    lines.push(...continuedFolders(walked.entries, page.pagination.offset))
    for (const entry of page.items) lines.push(entryLine(entry, sort === 'mtime'))
    lines.push(pagingFooter('list_directory', page.pagination, nextArgs, 'Entries'))
    const result = textResult(lines.join('\n'), {
      path: dir.requested,
      entries: page.items.map(e => e.kind === 'dir' ? `${e.relative}/` : e.relative),
      pagination: page.pagination
    })
    return { ...result, partial: walked.truncated }
  }
})
