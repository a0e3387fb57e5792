import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import type { BlameLine } from '../services/git/index.js'
import { fitLargest } from '../tool-kit/budget.js'
import { defineTool, textResult } from '../tool-api/define-tool.js'
import { counted, cutLine } from '../tool-kit/format.js'
import { clip, GitTail, repositoryPath, Revision, short } from '../tool-kit/git-common.js'
import { formatCall } from '../tool-kit/paging.js'

/** Lines blamed per call at most: blame walks history per line range, so wide ranges are slow on old files. */
const MAX_SPAN = 500

const GitBlameInput = Type.Object({
  path: Type.String({ minLength: 1, description: 'File to blame, relative to the root, e.g. "src/app.ts"' }),
  start_line: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'First line to blame, e.g. 40' })),
  end_line: Type.Optional(Type.Integer({ minimum: 1, description: 'Last line (default start_line + 99; at most 500 lines per call), e.g. 80' })),
  ref: Revision('The commit whose version of the file is blamed (committed content only), e.g. "HEAD~3"', 'HEAD'),
  ...GitTail
})

/** structuredContent of git_blame. */
export const GitBlameOutput = Type.Object({
  path: Type.String({ description: 'File blamed, e.g. "src/app.ts"' }),
  ref: Type.String({ description: 'Full hash of the version blamed, e.g. "9fceb02d0ae598e95dc970b74767f19372d61af8"' }),
  lines: Type.Array(Type.Object({
    line: Type.Integer({ description: 'Line number, e.g. 42' }),
    hash: Type.String({ description: 'Commit that last changed the line, e.g. "e83c5163316f89bfbde7d9ab23ca2e25604af290"' }),
    author: Type.String({ description: 'Its author, e.g. "Alice"' }),
    date: Type.String({ description: 'Its author date, UTC, e.g. "2024-03-01T11:00:00Z"' })
  }, { description: 'One line, e.g. {"line":42,"hash":"e83c5163…","author":"Alice"}' }), { description: 'Lines shown, in order' }),
  total_lines: Type.Integer({ description: 'Lines in the file at ref, e.g. 310' })
})

function render (lines: BlameLine[], n: number, head: string, next: string | undefined): string {
  const shown = lines.slice(0, n)
  const width = String(Math.max(...shown.map(l => l.line))).length
  const commits = new Map(shown.map(l => [l.hash, l]))
  const out = [head, '']
  let previous = ''
  for (const l of shown) {
    // A run of lines from one commit names it once: the column stays readable and the answer small.
    const who = l.hash === previous ? ' '.repeat(12 + 1 + 10 + 1 + 16) : `${short(l.hash)} ${l.date.slice(0, 10)} ${clip(l.author, 16).padEnd(16)}`
    out.push(`${who} ${String(l.line).padStart(width)}│${cutLine(l.text)}`)
    previous = l.hash
  }
  out.push('', `## ${counted(commits.size, 'commit')}`, '')
  for (const c of commits.values()) out.push(`${short(c.hash)} ${clip(c.summary, 200)}`)
  if (next !== undefined) out.push('', next)
  return out.join('\n')
}

/** Who last changed each line of a file range, with the commits' subjects. */
export const gitBlame = defineTool({
  name: 'git_blame',
  title: 'Git Blame',
  category: 'history',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Tell which commit, author and date last changed each line in a range of a file, as of a commit (HEAD by default), with each commit\'s subject.\n\n' +
    'git_show shows a commit it names; read_files reads the current file. At most 500 lines per call: blame the part you are looking at.',
  input: GitBlameInput,
  output: GitBlameOutput,
  timeoutHint: 'blame fewer lines (start_line/end_line), then call again',
  examples: [
    { comment: 'Who wrote lines 40–80', arguments: { path: 'src/app.ts', start_line: 40, end_line: 80 } },
    { comment: 'The same lines as of an older commit', arguments: { path: 'src/app.ts', start_line: 40, end_line: 80, ref: 'HEAD~5' } }
  ],
  async run (args, { signal }) {
    const { workspace, git: repositories, tokenizer, ref = 'HEAD', start_line: start = 1, max_response_tokens: budget = 8000 } = args
    const target = repositoryPath(workspace, repositories, args.path, 'path')
    const { git } = target
    const end = args.end_line ?? start + 99
    if (end < start) throw toolError('INVALID_ARGUMENT', `end_line ${end} is before start_line ${start}`, `e.g. start_line=${start} end_line=${start + 99}`)
    if (end - start + 1 > MAX_SPAN) throw toolError('INVALID_ARGUMENT', `${end - start + 1} lines asked, at most ${MAX_SPAN} per call`, `e.g. start_line=${start} end_line=${start + MAX_SPAN - 1}`)
    const hash = await git.resolveCommit(ref, 'ref', signal)
    const total = await git.lineCount(hash, target.path, signal)
    if (total === undefined) {
      throw toolError('PATH_NOT_FOUND', `path: "${target.shown}" is not a file in commit ${short(hash)}`, `git_log path="${target.shown}" lists the commits that changed it (blame a ref where it exists)`)
    }
    if (start > total) throw toolError('INVALID_ARGUMENT', `start_line ${start} is past the end: "${target.shown}" has ${counted(total, 'line')} at ${short(hash)}`, `e.g. start_line=1 end_line=${Math.min(total, 100)}`)
    const last = Math.min(end, total)
    const lines = await git.blame(hash, target.path, start, last, signal)
    const head = `# Blame of ${target.shown} at ${short(hash)} — lines ${start}–${last} of ${total}`
    const nextFrom = (n: number): string | undefined => {
      const shownEnd = start + n - 1
      if (shownEnd >= total) return undefined
      const stop = shownEnd < last ? last : Math.min(total, shownEnd + (last - start + 1))
      return `${shownEnd < last ? 'Lines left out (budget)' : 'More lines'} | next: ${formatCall('git_blame', { path: target.shown, start_line: shownEnd + 1, end_line: stop, ref: short(hash) })}`
    }
    const fitted = await fitLargest(1, lines.length, n => ({ text: render(lines, n, head, nextFrom(n)), info: n }), budget, tokenizer, signal)
    const n = fitted?.n ?? 1
    const structured = lines.slice(0, n).map(({ line, hash, author, date }) => ({ line, hash, author, date }))
    return textResult(fitted?.text ?? render(lines, 1, head, nextFrom(1)), { path: target.shown, ref: hash, lines: structured, total_lines: total })
  }
})
