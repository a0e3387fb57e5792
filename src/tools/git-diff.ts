import { Type } from '@sinclair/typebox'
import type { ToolError } from '../base/errors.js'
import type { DiffSides, FileChange, GitService } from '../services/git/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import { pruneLines } from '../services/prune-mentions.js'
import { defineTool, textResult } from '../tool-api/define-tool.js'
import { counted, cutLine } from '../tool-kit/format.js'
import { changeLine, cutPatch, fileOutput, fitPatches, GitFileOutput, GitTail, repositoryPath, Revision, short } from '../tool-kit/git-common.js'
import { formatCall, paginate, pagingFooter, PaginationOutput, withoutDefaults, type Page } from '../tool-kit/paging.js'
import { fitLargest } from '../tool-kit/budget.js'

const GitDiffInput = Type.Object({
  from: Revision('The older side: a commit hash, branch, tag or HEAD~N, e.g. "main"', 'HEAD'),
  to: Revision('The newer side, same forms as from; default the working tree (uncommitted changes), e.g. "HEAD"'),
  path: Type.Optional(Type.String({ description: 'Only this file or folder, e.g. "src"' })),
  mode: Type.Optional(Type.Union([Type.Literal('patch'), Type.Literal('stat')], { default: 'patch', description: 'patch: changed files and their patches; stat: changed files with line counts only, e.g. "stat"' })),
  context_lines: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, default: 3, description: 'Unchanged lines around each change (0–20), e.g. 0' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Files per page (1–200), e.g. 20' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Files to skip, from the previous footer\'s next call, e.g. 50' })),
  ...GitTail
})

/** structuredContent of git_diff. */
export const GitDiffOutput = Type.Object({
  from: Type.String({ description: 'Full hash of the older side, e.g. "e83c5163316f89bfbde7d9ab23ca2e25604af290"' }),
  to: Type.String({ description: 'Full hash of the newer side, or "working tree", e.g. "working tree"' }),
  files: Type.Array(GitFileOutput, { description: 'Changed files on this page, in path order' }),
  pagination: PaginationOutput
})

/**
 * Working-tree files are read by git, not through the workspace's open checks: a file that is now a hard
 * link (possibly to something outside the root) must not have its content shown. The file list still names it.
 */
async function refusedByWorkspace (workspace: WorkspaceService, change: FileChange, prefix: string): Promise<string | undefined> {
  if (change.status === 'D') return undefined
  try {
    const resolved = await workspace.resolve(prefix + change.path, { field: 'path' })
    const handle = await workspace.openFile(resolved)
    await handle.close()
    return undefined
  } catch (err) {
    // Whatever the workspace would not open (a hard link, a link out, unreadable, gone since …) git does not show either.
    return String((err as ToolError).toolCode)
  }
}

/**
 * The patches of one page's files, in its order. One git run for the page (a page of a huge diff costs what
 * a small diff does); a rename is asked for by both its paths, or git would show an addition.
 */
async function pagePatches (git: GitService, sides: DiffSides, files: FileChange[], context: number, signal: AbortSignal): Promise<Array<string | undefined>> {
  if (files.length === 0) return []
  const pathsOf = (c: FileChange): string[] => c.oldPath === undefined ? [c.path] : [c.oldPath, c.path]
  const together = await git.diffPatch({ ...sides, path: files.flatMap(pathsOf) }, context, signal)
  if (together.length === files.length) return together
  // Too large together: each file alone, and one still too large alone has no patch (undefined).
  return await Promise.all(files.map(async c => (await git.diffPatch({ ...sides, path: pathsOf(c) }, context, signal))[0]))
}

/** Changed files and patches between two commits, or a commit and the working tree, paginated by file. */
export const gitDiff = defineTool({
  name: 'git_diff',
  title: 'Git Diff',
  category: 'history',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Compare two commits, or a commit with the working tree (uncommitted changes, the default), listing changed files with line counts and their patches, one page of files at a time.\n\n' +
    'git_log finds commits to compare; git_show shows one commit whole. Untracked files are not part of a diff. Patches that exceed max_response_tokens are left out with the call that shows each.',
  input: GitDiffInput,
  output: GitDiffOutput,
  timeoutHint: 'narrow the diff with path= or use mode="stat", then call again',
  examples: [
    { comment: 'Uncommitted changes in src/', arguments: { path: 'src' } },
    { comment: 'What changed between a tag and main, files only', arguments: { from: 'v1.2.0', to: 'main', mode: 'stat' } }
  ],
  async run (args, { signal, unserved }) {
    const { workspace, git: repositories, tokenizer, from = 'HEAD', mode = 'patch', context_lines: context = 3, page_size: pageSize = 50, offset = 0, max_response_tokens: budget = 8000 } = args
    const target = repositoryPath(workspace, repositories, args.path, 'path')
    const { git, prefix } = target
    const fromHash = await git.resolveCommit(from, 'from', signal)
    const toHash = args.to === undefined ? undefined : await git.resolveCommit(args.to, 'to', signal)
    const sides = { from: fromHash, to: toHash, path: target.path }
    const changes = await git.diffChanges(sides, signal)
    const toShown = toHash === undefined ? 'the working tree' : short(toHash)
    const nextArgs = withoutDefaults({ ...args, offset: undefined, from: fromHash, to: toHash }, GitDiffInput)
    const under = target.path === '' ? '' : ` under ${target.shown}`
    const heading = `# Diff ${short(fromHash)} → ${toShown}${under}: ${counted(changes.length, 'file')} changed`
    const listing = (p: Page<FileChange>): string => [heading, '', ...p.items.map(c => changeLine(c, prefix)), '', pagingFooter('git_diff', p.pagination, nextArgs, 'Files')].join('\n')
    // The file list must fit before any patch: a page of more file lines than the budget holds is shortened,
    // and its footer continues where it stops.
    const full = paginate(changes, offset, pageSize)
    const listed = await fitLargest(1, full.items.length, n => ({ text: listing(paginate(changes, offset, n)), info: n }), budget, tokenizer, signal)
    const page = listed === undefined || listed.n === full.items.length ? full : paginate(changes, offset, listed.n)
    const patches = mode === 'stat' ? [] : await pagePatches(git, sides, page.items, context, signal)
    const refused = toHash === undefined ? await Promise.all(page.items.map(async c => await refusedByWorkspace(workspace, c, prefix))) : []
    // A file without a patch to show stands in as '' (it always "fits"); render names why it has none.
    const texts = patches.map((p, i) => refused[i] === undefined ? p ?? '' : '')
    const pathCall = (p: string): string => formatCall('git_diff', { ...nextArgs, path: p, page_size: undefined })
    // Nothing changed: say where else the change may be, rather than leave an empty list.
    const pathArg = target.path === '' ? {} : { path: args.path }
    const none = changes.length > 0
      ? []
      : pruneLines([toHash === undefined
        ? `No uncommitted changes${under}. Committed ones: ${formatCall('git_log', pathArg)} lists the commits, ${formatCall('git_diff', { ...pathArg, from: 'HEAD~1', to: 'HEAD' })} shows the last.`
        : `No changes between ${short(fromHash)} and ${toShown}${under}. ${formatCall('git_log', pathArg)} lists the commits that touched it.`], unserved)
    const render = (n: number, cut?: number): string => {
      const lines = [heading, '', ...none]
      lines.push(...page.items.map(c => changeLine(c, prefix)))
      if (texts.length > 0) lines.push('', '## Patches', '')
      for (let i = 0; i < texts.length; i++) {
        const change = page.items[i]
        if (refused[i] !== undefined) lines.push(`(patch of ${prefix}${change.path} not shown: ${String(refused[i])} — the working-tree file is not one the workspace serves)`)
        else if (patches[i] === undefined) lines.push(`(patch of ${prefix}${change.path} too large to show: narrow it with context_lines=0, or read the file)`)
        else if (i < n) lines.push(texts[i].replace(/\n$/, ''))
        else if (i === n && cut !== undefined) lines.push(cutPatch(texts[i], cut).replace(/\n$/, ''))
        else lines.push(`(patch of ${cutLine(prefix + change.path, 200)} left out for the budget: ${pathCall(prefix + change.path)})`)
      }
      lines.push('', pagingFooter('git_diff', page.pagination, nextArgs, 'Files'))
      return lines.join('\n')
    }
    const fitted = await fitPatches(texts, render, budget, tokenizer, signal)
    const files = page.items.map((c, i) => fileOutput(c, i < fitted.shown && texts[i] !== '', prefix))
    return textResult(fitted.text, { from: fromHash, to: toHash ?? 'working tree', files, pagination: page.pagination })
  }
})
