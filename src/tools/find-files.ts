import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import { compileGlobs, type WalkEntry } from '../services/workspace/index.js'
import { defineTool, Inject, textResult } from '../tool-api/define-tool.js'
import { counted } from '../tool-kit/format.js'
import { formatBytes } from '../services/byte-size.js'
import { compareText, formatCall, paginate, pagingFooter, PaginationOutput } from '../tool-kit/paging.js'
import { ignoredNotice } from '../tool-kit/ignored-notice.js'

/** Most entries one search walks before it stops (total becomes a lower bound). */
const MAX_WALK_ENTRIES = 200_000

/** structuredContent of find_files: locations and pagination only. */
export const FindFilesOutput = Type.Object({
  path: Type.String({ description: 'Searched folder' }),
  files: Type.Array(Type.String(), { description: 'Matching paths on this page' }),
  pagination: PaginationOutput
})

/** Glob search over file paths: names only, never contents. */
export const findFiles = defineTool({
  name: 'find_files',
  title: 'Find Files by Name',
  category: 'navigation',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Find files whose path matches globs (names, not contents) — pass several in `patterns` to find them in one call.\n\n' +
    'search_regex searches contents. A glob without "/" matches the name at any depth.',
  input: Type.Object({
    patterns: Type.Array(Type.String({ minLength: 1, description: 'A glob, e.g. "*.ts"' }), { minItems: 1, description: 'Globs (1–20), e.g. ["*.ts", "src/**/index.*"]' }),
    path: Type.Optional(Type.String({ default: '.', description: 'Folder to search, e.g. "src"' })),
    exclude: Type.Optional(Type.Array(Type.String({ minLength: 1, description: 'A glob, e.g. "dist"' }), { default: [], description: 'Globs to leave out, e.g. ["**/fixtures/**"]' })),
    include_hidden: Type.Optional(Type.Boolean({ default: false, description: 'Include dot-files and dot-folders' })),
    respect_gitignore: Type.Optional(Type.Boolean({ default: true, description: 'Skip .gitignore/.ignore matches' })),
    sort: Type.Optional(Type.Union([Type.Literal('path'), Type.Literal('mtime')], { default: 'path', description: 'Order: path or mtime (newest first)' })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Matches per page, e.g. 100' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_offset of the previous page, e.g. 100' })),
    workspace: Inject('workspace')
  }),
  output: FindFilesOutput,
  timeoutHint: 'give a smaller path or more specific patterns (a smaller page_size does not shorten the walk), then call again',
  examples: [
    { comment: 'Every test file', arguments: { patterns: ['**/*.test.ts', '**/*.spec.ts'] } },
    { comment: 'Config files under src, without fixtures', arguments: { patterns: ['*.config.*', 'tsconfig*.json'], path: 'src', exclude: ['**/fixtures/**'] } },
    { comment: 'Recently changed Markdown files', arguments: { patterns: ['*.md'], sort: 'mtime', page_size: 20 } }
  ],
  async run (args, { signal }) {
    const { patterns, path = '.', exclude = [], include_hidden: includeHidden = false, respect_gitignore: respectGitignore = true, sort = 'path', page_size: pageSize = 100, offset = 0, workspace } = args
    // Checked here, so a bad glob is the caller's error before any walk; the walk compiles them again where it runs.
    compileGlobs(patterns, 'patterns')
    compileGlobs(exclude, 'exclude')
    const dir = await workspace.resolve(path, { field: 'path' })
    if (!(await workspace.stat(dir)).isDirectory()) {
      throw toolError('NOT_A_DIRECTORY', `path: "${dir.requested}" is a file, not a folder`, 'pass the folder that contains it, e.g. path="." ')
    }
    const walked = await workspace.walk({
      start: dir,
      maxDepth: Number.POSITIVE_INFINITY,
      includeHidden,
      respectGitignore,
      maxEntries: MAX_WALK_ENTRIES,
      // Over every root (the top of several), globs see each path after its root's `name:`, as they would in that root.
      match: { patterns, exclude, base: dir.base, overRoots: dir.relative === '.' && workspace.roots.length > 1 },
      // Only files are shown: a folder's size and mtime would be read, and the folder handed back, for nothing.
      statDirs: false,
      showDirs: false,
      signal
    })
    const files = walked.entries.filter(e => e.kind !== 'dir')
    const order = sort === 'mtime'
      ? (a: WalkEntry, b: WalkEntry) => b.mtimeMs - a.mtimeMs || compareText(a.relative, b.relative)
      : (a: WalkEntry, b: WalkEntry) => compareText(a.relative, b.relative)
    files.sort(order)
    const page = paginate(files, offset, pageSize, walked.truncated)
    const nextArgs = {
      patterns,
      path: dir.requested,
      exclude: exclude.length > 0 ? exclude : undefined,
      include_hidden: includeHidden ? true : undefined,
      respect_gitignore: respectGitignore ? undefined : false,
      sort: sort !== 'path' ? sort : undefined,
      page_size: pageSize !== 100 ? pageSize : undefined
    }
    const notices = [...walked.notes]
    if (files.length === 0) {
      notices.push(`no match; ${includeHidden ? '' : 'hidden files (include_hidden=true) and '}${respectGitignore ? 'gitignored files (respect_gitignore=false) are skipped' : 'check the globs'}`)
    }
    // Say what the ignore rules left out when it matters: files that matched, or, for an empty answer,
    // folders never searched. Not on every answer: node_modules/ being skipped is what users expect.
    const past = formatCall('find_files', { ...nextArgs, respect_gitignore: false })
    const matchingIgnored = walked.skippedIgnored - walked.skippedIgnoredDirs
    const ignored = matchingIgnored > 0
      ? await ignoredNotice(workspace, walked.firstIgnoredFile, `${counted(matchingIgnored, 'more matching file')} excluded by ignore rules`, past)
      : files.length === 0 && walked.skippedIgnoredDirs > 0
        ? await ignoredNotice(workspace, walked.firstIgnoredDir, `${counted(walked.skippedIgnoredDirs, 'ignored folder')} not searched`, past)
        : undefined
    if (ignored !== undefined) notices.push(ignored)
    if (files.length > 0 && page.items.length === 0) notices.push(`offset ${offset} is past the end (${counted(files.length, 'match', 'matches')}); use offset=0`)

    const lines = [`# ${counted(`${files.length}${walked.truncated ? '+' : ''}`, 'file')} match${files.length === 1 && !walked.truncated ? 'es' : ''} ${JSON.stringify(patterns)} under ${dir.requested} (by ${sort})`]
    for (const notice of notices) lines.push(`Note: ${notice}`)
    for (const f of page.items) {
      const when = sort === 'mtime' && f.mtimeMs > 0 ? `  ${new Date(f.mtimeMs).toISOString()}` : ''
      lines.push(f.kind === 'file' ? `${f.relative}  ${formatBytes(f.size)}${when}` : `${f.relative}  [${f.kind}]${when}`)
    }
    lines.push(pagingFooter('find_files', page.pagination, nextArgs))
    const result = textResult(lines.join('\n'), {
      path: dir.requested,
      files: page.items.map(f => f.relative),
      pagination: page.pagination
    })
    return { ...result, partial: walked.truncated }
  }
})
