import { Type } from '@sinclair/typebox'
import type { CommitSummary } from '../services/git/index.js'
import { fitLargest } from '../tool-kit/budget.js'
import { defineTool, textResult } from '../tool-api/define-tool.js'
import { clip, gitDate, GitTail, repositoryPath, Revision, short } from '../tool-kit/git-common.js'
import { pagingFooter, PaginationOutput, withoutDefaults, type Pagination } from '../tool-kit/paging.js'

const GitLogInput = Type.Object({
  ref: Revision('Revision to start from: a branch, tag, commit hash or HEAD~N, e.g. "main"', 'HEAD'),
  path: Type.Optional(Type.String({ description: 'Only commits that changed this file or folder (it need not exist now), e.g. "src/app.ts"' })),
  author: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only commits whose author name or email contains this text (any case), e.g. "alice@"' })),
  grep: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only commits whose message contains this text (any case), e.g. "retry"' })),
  since: Type.Optional(Type.String({ maxLength: 40, description: 'Only commits after this date: ISO or "N units ago", e.g. "2024-01-31" or "2 weeks ago"' })),
  until: Type.Optional(Type.String({ maxLength: 40, description: 'Only commits before this date, same forms as since, e.g. "2024-06-30"' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Commits per page (1–100), e.g. 50' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Commits to skip, from the previous footer\'s next call, e.g. 20' })),
  ...GitTail
})

/** structuredContent of git_log. */
export const GitLogOutput = Type.Object({
  ref: Type.String({ description: 'Full hash the listing started from (pass it as ref to page on a history that may move), e.g. "9fceb02d0ae598e95dc970b74767f19372d61af8"' }),
  path: Type.String({ description: 'Path filter, relative to the root ("." for none), e.g. "src"' }),
  commits: Type.Array(Type.Object({
    hash: Type.String({ description: 'Full commit hash, e.g. "9fceb02d0ae598e95dc970b74767f19372d61af8"' }),
    parents: Type.Array(Type.String({ description: 'A parent hash, e.g. "e83c5163316f89bfbde7d9ab23ca2e25604af290"' }), { description: 'Parent hashes (two or more for a merge), e.g. ["e83c5163…"]' }),
    author: Type.String({ description: 'Author name, e.g. "Alice"' }),
    email: Type.String({ description: 'Author email, e.g. "alice@example.com"' }),
    date: Type.String({ description: 'Author date, ISO 8601, e.g. "2024-03-01T12:00:00+01:00"' }),
    subject: Type.String({ description: 'First line of the message, e.g. "Retry failed uploads"' })
  }, { description: 'One commit, e.g. {"hash":"9fceb02…","subject":"Retry failed uploads"}' }), { description: 'Commits on this page, newest first' }),
  pagination: PaginationOutput
})

const line = (c: CommitSummary): string =>
  `${short(c.hash)} ${c.date.slice(0, 10)} ${clip(c.author, 60)}${c.parents.length > 1 ? ' (merge)' : ''} — ${clip(c.subject, 200)}`

/** Commits that touched a path, newest first, filtered by author, message and date, paginated. */
export const gitLog = defineTool({
  name: 'git_log',
  title: 'Git Log',
  category: 'history',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'List the commits of the workspace\'s git history, newest first — filter by path, author, message text and date; each line has the hash git_show and git_diff take.\n\n' +
    'git_show shows one commit or a file as it was; git_blame tells who last changed each line. The footer gives the exact call for the next page, pinned to the starting commit.',
  input: GitLogInput,
  output: GitLogOutput,
  timeoutHint: 'narrow the history with path, since or author, then call again',
  examples: [
    { comment: 'Recent history of one file', arguments: { path: 'src/app.ts', page_size: 10 } },
    { comment: 'Commits about retries by one author in the last month', arguments: { grep: 'retry', author: 'alice', since: '1 month ago' } }
  ],
  async run (args, { signal }) {
    const { workspace, git: repositories, tokenizer, ref = 'HEAD', page_size: pageSize = 20, offset = 0, max_response_tokens: budget = 8000 } = args
    const target = repositoryPath(workspace, repositories, args.path, 'path')
    const { git } = target
    const since = gitDate(args.since, 'since')
    const until = gitDate(args.until, 'until')
    const from = await git.resolveCommit(ref, 'ref', signal)
    const found = await git.log({ from, path: target.path, author: args.author, grep: args.grep, since, until, skip: offset, count: pageSize + 1 }, signal)
    const hasMore = found.length > pageSize
    const page = found.slice(0, pageSize)
    const nextArgs = { ...withoutDefaults({ ...args, offset: undefined }, GitLogInput), ref: from }
    // The total is not counted (a full walk of a long history): a page that is not the last says "N+".
    const paginationFor = (n: number): Pagination => {
      const more = hasMore || n < page.length
      return { offset, page_size: pageSize, returned: n, total: offset + n + (more ? 1 : 0), total_is_lower_bound: more, has_more: more, next_offset: more ? offset + n : -1 }
    }
    const render = (n: number): string => {
      const head = `# History of ${target.shown} from ${short(from)}${ref === from ? '' : ` (${clip(ref, 60)})`}`
      const others = target.others.length === 0 ? [] : [`Only the first root's history; the others have their own: ${target.others.map(name => `git_log path="${name}:"`).join(', ')}.`]
      const body = n === 0 ? ['No commits match.'] : page.slice(0, n).map(line)
      return [head, ...others, '', ...body, '', pagingFooter('git_log', paginationFor(n), nextArgs, 'Commits')].join('\n')
    }
    const fitted = await fitLargest(1, page.length, n => ({ text: render(n), info: n }), budget, tokenizer, signal)
    // Not even one commit line over budget is impossible (subjects are cut to 200 characters, budgets start at 1000).
    const n = fitted?.n ?? 0
    return textResult(fitted?.text ?? render(0), { ref: from, path: target.shown, commits: page.slice(0, n), pagination: paginationFor(n) })
  }
})
