import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import type { CommitDetail, FileChange, GitService } from '../services/git/index.js'
import type { Tokenizer } from '../services/tokenizer/index.js'
import { fitLargest } from '../tool-kit/budget.js'
import { pruneMentions } from '../services/prune-mentions.js'
import { defineTool, textResult, type ToolResult } from '../tool-api/define-tool.js'
import { counted, cutLine } from '../tool-kit/format.js'
import { changeLine, cutPatch, fileOutput, fitPatches, GitFileOutput, GitTail, repositoryPath, Revision, short, type RepositoryTarget } from '../tool-kit/git-common.js'
import { formatCall } from '../tool-kit/paging.js'

/** Largest file shown at a revision. */
const MAX_FILE_BYTES = 10 * 1024 * 1024
/** Files a commit answer lists at most (a vendor import touches thousands; git_diff pages through them). */
const MAX_FILES = 200

const GitShowInput = Type.Object({
  ref: Revision('The commit: a hash (git_log lists them), a branch, tag or HEAD~N, e.g. "HEAD~1"', 'HEAD'),
  path: Type.Optional(Type.String({ description: 'With show="commit", only this file or folder of the commit; with show="file", the file to show, e.g. "src/app.ts"' })),
  show: Type.Optional(Type.Union([Type.Literal('commit'), Type.Literal('file')], { default: 'commit', description: 'What to show: the commit (message, changed files, patch) or the file at path as it was at ref, e.g. "file"' })),
  start_line: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'With show="file": first line to show, e.g. 40' })),
  end_line: Type.Optional(Type.Integer({ minimum: 1, description: 'With show="file": last line to show (default: as many as the budget holds), e.g. 120' })),
  context_lines: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, default: 3, description: 'Unchanged lines around each change in the patch (0–20), e.g. 1' })),
  ...GitTail
})

/** structuredContent of git_show. */
export const GitShowOutput = Type.Object({
  hash: Type.String({ description: 'Full hash of the commit shown, e.g. "9fceb02d0ae598e95dc970b74767f19372d61af8"' }),
  author: Type.String({ description: 'Author name, e.g. "Alice"' }),
  date: Type.String({ description: 'Author date, ISO 8601, e.g. "2024-03-01T12:00:00+01:00"' }),
  parents: Type.Array(Type.String({ description: 'A parent hash, e.g. "e83c5163316f89bfbde7d9ab23ca2e25604af290"' }), { description: 'Parent hashes; the patch is against the first, e.g. ["e83c5163…"]' }),
  subject: Type.String({ description: 'First line of the message, e.g. "Retry failed uploads"' }),
  files: Type.Array(GitFileOutput, { description: 'Changed files (show="commit"; empty for show="file")' }),
  path: Type.Optional(Type.String({ description: 'With show="file": the file shown, e.g. "src/app.ts"' })),
  lines: Type.Optional(Type.Array(Type.Integer({ description: 'A line number, e.g. 40' }), { description: 'With show="file": first and last line shown, e.g. [1, 120]' }))
})

interface ShowArgs {
  git: GitService
  tokenizer: Tokenizer
  budget: number
  signal: AbortSignal
  /** Tools this server does not serve: the answer names none. */
  unserved: ReadonlySet<string>
}

function header (c: CommitDetail): string[] {
  const merge = c.parents.length > 1 ? `Merge of ${c.parents.map(short).join(' + ')}; the patch is against the first parent.` : undefined
  return [
    `# Commit ${c.hash}`,
    '',
    `Author: ${c.author} <${c.email}>, ${c.date}`,
    ...(c.committer !== c.author || c.committerDate !== c.date ? [`Committed: ${c.committer}, ${c.committerDate}`] : []),
    ...(merge === undefined ? [] : [merge]),
    '',
    ...c.message.split('\n').map(l => `    ${cutLine(l, 500)}`)
  ]
}

/** The patch section: n whole patches, the next one cut to `cut` lines if given, the rest named with their call ('' where it is not served). */
function patchLines (changes: FileChange[], patches: string[], n: number, cut: number | undefined, call: (path: string) => string, prefix: string): string[] {
  const showing = (shown: string): string => { const next = call(shown); return next === '' ? '' : `: ${next}` }
  return changes.map((change, i) => {
    if (i < n) return patches[i].replace(/\n$/, '')
    if (i === n && cut !== undefined) return cutPatch(patches[i], cut).replace(/\n$/, '')
    const shown = prefix + change.path
    if (i < patches.length) return `(patch of ${shown} left out for the budget${showing(shown)})`
    return `(patch of ${shown} too large to show with the rest${showing(shown)})`
  })
}

async function showCommit (hash: string, pathFilter: RepositoryTarget, context: number, s: ShowArgs): Promise<ToolResult> {
  // Metadata and the file list are independent runs: asked for together, the call waits for one git, not two.
  const [commit, all] = await Promise.all([s.git.commit(hash, s.signal), s.git.commitChanges(hash, pathFilter.path, s.signal)])
  const changes = all.slice(0, MAX_FILES)
  // Past MAX_FILES no patch is asked for: git_diff pages through such a commit.
  const patches = all.length > MAX_FILES ? undefined : await s.git.commitPatch(commit.hash, pathFilter.path, context, s.signal)
  const base = commit.parents[0]
  // The root commit has no parent to diff against: narrowing the commit itself to the path is the call.
  const diffCall = (p: string): string => base === undefined
    ? formatCall('git_show', { ref: short(commit.hash), path: p })
    : formatCall('git_diff', { from: short(base), to: short(commit.hash), path: p })
  const render = (n: number, cut?: number): string => {
    const lines = [...header(commit), '', `## ${counted(all.length, 'file')} changed${pathFilter.path === '' ? '' : ` under ${pathFilter.shown}`}`, '']
    lines.push(...changes.map(c => changeLine(c, pathFilter.prefix)))
    if (patches === undefined) lines.push(pruneMentions(`… and ${all.length - MAX_FILES} more (git_diff pages through them, e.g. ${diffCall('.')})`, s.unserved))
    else if (changes.length > 0) lines.push('', '## Patch', '', ...patchLines(changes, patches, n, cut, p => pruneMentions(diffCall(p), s.unserved), pathFilter.prefix))
    return lines.join('\n')
  }
  const usable = patches ?? []
  const fitted = await fitPatches(usable, render, s.budget, s.tokenizer, s.signal)
  const files = changes.map((c, i) => fileOutput(c, i < fitted.shown, pathFilter.prefix))
  return textResult(fitted.text, { hash: commit.hash, author: commit.author, date: commit.date, parents: commit.parents, subject: commit.subject, files })
}

async function showFile (commit: CommitDetail, target: { path: string, shown: string }, start: number, end: number | undefined, s: ShowArgs): Promise<ToolResult> {
  if (target.path === '') throw toolError('INVALID_ARGUMENT', 'show="file" needs path: the file to show', `e.g. git_show ref="${short(commit.hash)}" show="file" path="README.md"`)
  const file = await s.git.fileAt(commit.hash, target.path, MAX_FILE_BYTES, s.signal)
  if (file === undefined) {
    throw toolError('PATH_NOT_FOUND', `path: "${target.shown}" is not a file in commit ${short(commit.hash)}`, `git_log path="${target.shown}" lists the commits that changed it; git_show ref="${short(commit.hash)}" lists what that commit changed`)
  }
  if (file.bytes.subarray(0, 8192).includes(0)) {
    throw toolError('BINARY_FILE', `path: "${target.shown}" is binary at ${short(commit.hash)} (${file.bytes.length} bytes)`, 'git_show show="commit" lists its size changes; read_files reads text files')
  }
  const all = file.bytes.toString('utf8').replace(/\n$/, '').split('\n')
  if (start > all.length) throw toolError('INVALID_ARGUMENT', `start_line ${start} is past the end: "${target.shown}" has ${counted(all.length, 'line')} at ${short(commit.hash)}`, 'e.g. start_line=1')
  const last = Math.min(end ?? all.length, all.length)
  const width = String(last).length
  const render = (n: number): string => {
    const shownEnd = start + n - 1
    const lines = [`# ${target.shown} at ${short(commit.hash)} — lines ${start}–${shownEnd} of ${all.length}${file.truncated ? ' (file cut at 10 MB)' : ''}`, '']
    for (let i = start; i <= shownEnd; i++) lines.push(`${String(i).padStart(width)}│${cutLine(all[i - 1])}`)
    if (shownEnd < last) lines.push('', `Lines ${shownEnd + 1}–${last} left out (budget) | next: ${formatCall('git_show', { ref: short(commit.hash), show: 'file', path: target.shown, start_line: shownEnd + 1, end_line: end })}`)
    return lines.join('\n')
  }
  const fitted = await fitLargest(1, last - start + 1, n => ({ text: render(n), info: n }), s.budget, s.tokenizer, s.signal)
  const n = fitted?.n ?? 1
  return textResult(fitted?.text ?? render(1), { hash: commit.hash, author: commit.author, date: commit.date, parents: commit.parents, subject: commit.subject, files: [], path: target.shown, lines: [start, start + n - 1] })
}

/** One commit (message, changed files, patch within the budget), or one file as it was at a commit. */
export const gitShow = defineTool({
  name: 'git_show',
  title: 'Git Show',
  category: 'history',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Show one commit of the workspace\'s git history — message, changed files with line counts and the patch — or, with show="file", a file as it was at that commit.\n\n' +
    'git_log finds the commit; git_diff compares any two commits or a commit with the working tree. Patches that exceed max_response_tokens are left out with the exact git_diff call for each.',
  input: GitShowInput,
  output: GitShowOutput,
  timeoutHint: 'narrow the commit to one path with path=, then call again',
  examples: [
    { comment: 'The latest commit, whole', arguments: {} },
    { comment: 'A file as it was two commits ago, lines 1–80', arguments: { ref: 'HEAD~2', show: 'file', path: 'src/app.ts', end_line: 80 } }
  ],
  async run (args, { signal, unserved }) {
    const { workspace, git: repositories, tokenizer, ref = 'HEAD', show = 'commit', start_line: start = 1, end_line: end, context_lines: context = 3, max_response_tokens: budget = 8000 } = args
    const target = repositoryPath(workspace, repositories, args.path, 'path')
    const { git } = target
    if (end !== undefined && end < start) throw toolError('INVALID_ARGUMENT', `end_line ${end} is before start_line ${start}`, `e.g. start_line=${start} end_line=${start + 99}`)
    const hash = await git.resolveCommit(ref, 'ref', signal)
    const s = { git, tokenizer, budget, signal, unserved }
    return show === 'file' ? await showFile(await git.commit(hash, signal), target, start, end, s) : await showCommit(hash, target, context, s)
  }
})
