import { Type, type TOptional, type TString } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import type { FileChange, GitRepositories, GitService } from '../services/git/index.js'
import type { Tokenizer } from '../services/tokenizer/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import { fitLargest, MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS } from './budget.js'
import { Inject } from '../tool-api/define-tool.js'
import { cutLine } from './format.js'

/** The token budget parameter of the history tools. */
export const GitBudget = Type.Optional(Type.Integer({
  minimum: MIN_RESPONSE_TOKENS,
  maximum: MAX_RESPONSE_TOKENS,
  default: 8000,
  description: 'Token budget of the answer (1000–20000); over it, patches and lines are left out with a note saying how to get them, e.g. 4000'
}))

/** The parameters every history tool ends with: its budget, then the injected services (never published). */
export const GitTail = {
  max_response_tokens: GitBudget,
  workspace: Inject('workspace'),
  git: Inject('git'),
  tokenizer: Inject('tokenizer')
}

/** A revision parameter (branch, tag, hash, HEAD~N): validated and resolved by GitService.resolveCommit. */
export function Revision (description: string, fallback?: string): TOptional<TString> {
  return Type.Optional(Type.String({ minLength: 1, maxLength: 200, ...(fallback === undefined ? {} : { default: fallback }), description }))
}

/** A file of a diff in structuredContent. */
export const GitFileOutput = Type.Object({
  path: Type.String({ description: 'Path after the change, relative to the root, e.g. "src/app.ts"' }),
  old_path: Type.Optional(Type.String({ description: 'Path before a rename or copy, e.g. "src/old.ts"' })),
  status: Type.String({ description: 'A added, M modified, D deleted, R renamed, C copied, T type changed, e.g. "M"' }),
  added: Type.Optional(Type.Integer({ description: 'Lines added (absent for binary content), e.g. 12' })),
  deleted: Type.Optional(Type.Integer({ description: 'Lines deleted (absent for binary content), e.g. 3' })),
  patch_shown: Type.Boolean({ description: 'Whether the answer holds this file\'s patch, e.g. true' })
}, { description: 'One changed file, e.g. {"path":"src/app.ts","status":"M","added":2,"deleted":1,"patch_shown":true}' })

/** Text cut to `max` characters with an ellipsis: for columns and one-line subjects, where a marker would not fit. */
export const clip = (text: string, max: number): string => text.length > max ? `${text.slice(0, max - 1)}…` : text

/** The first characters of a hash: enough to be unique in any real repository, short enough to read. */
export const short = (hash: string): string => hash.slice(0, 12)

/** Where a history tool's path argument points: the root's repository and the path as it names it. */
export interface RepositoryTarget {
  /** The repository of the path's root. */
  git: GitService
  /** The path as the repository names it ('' for the whole repository). */
  path: string
  /** The path as the agent named it, safe to print. */
  shown: string
  /** What the workspace puts before the repository's paths: `docs:` when several roots are served, else ''. */
  prefix: string
  /** No path was given and other roots have history too: their names, for a note saying how to ask for them. */
  others: string[]
}

/**
 * A path argument of a history tool, in its root's repository; lexical only, since history holds paths that no
 * longer exist. Without a path: the first root's repository.
 */
export function repositoryPath (workspace: WorkspaceService, repositories: GitRepositories, input: string | undefined, field: string): RepositoryTarget {
  const { relative, bytes, root } = workspace.lexical(input ?? '.', field)
  const git = repositories.of(root)
  if (typeof git === 'string') {
    const others = repositories.names.map(name => `${field}="${name}:"`).join(', ')
    throw toolError('NOT_A_REPOSITORY', `${field}: the root "${root}" has no history the server can read: ${git}`,
      others === '' ? 'no root of this session is a git repository; read_files and search_regex still work' : `name a path in a root that is a git repository, e.g. ${others}`)
  }
  const prefix = workspace.roots.length > 1 ? `${root}:` : ''
  const text = bytes.toString('utf8')
  if (!Buffer.from(text).equals(bytes)) {
    throw toolError('INVALID_PATH', `${field}: "${relative}" is not valid UTF-8, which git arguments must be`, 'name its folder instead, e.g. path="src"')
  }
  // Without a path the first root is meant: named as such when there are several, never as "." (every root elsewhere).
  const others = input === undefined ? repositories.names.filter(name => name !== root) : []
  return { git, path: text, shown: input === undefined ? (prefix === '' ? '.' : prefix) : relative, prefix, others }
}

const DATE = /^(\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:?\d{2})?)?|\d{1,4} (second|minute|hour|day|week|month|year)s? ago)$/

/** A since/until value: an ISO date or "N units ago" — git's own date parser accepts too much to pass it anything else. */
export function gitDate (value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined
  if (!DATE.test(value)) throw toolError('INVALID_ARGUMENT', `${field} "${cutLine(value, 60)}" is not a date git_log understands`, `use an ISO date or "N days ago", e.g. ${field}="2024-01-31" or ${field}="2 weeks ago"`)
  return value
}

/** One line per changed file: `M src/app.ts (+3 −1)`, `R old.ts → new.ts (92%)`; paths after the root's prefix. */
export function changeLine (change: FileChange, prefix: string): string {
  const name = change.oldPath === undefined ? prefix + change.path : `${prefix}${change.oldPath} → ${prefix}${change.path}`
  const similarity = change.similarity === undefined ? '' : ` ${change.similarity}%`
  const lines = change.added === null ? 'binary' : `+${change.added} −${String(change.deleted)}`
  return `${change.status} ${name}${similarity} (${lines})`
}

/** structuredContent of one file, given whether its patch is in the answer; paths after the root's prefix. */
export function fileOutput (change: FileChange, patchShown: boolean, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = { path: prefix + change.path, status: change.status, patch_shown: patchShown }
  if (change.oldPath !== undefined) out.old_path = prefix + change.oldPath
  if (change.added !== null) out.added = change.added
  if (change.deleted !== null) out.deleted = change.deleted
  return out
}

/** What fitPatches kept. */
export interface FittedPatches {
  text: string
  /** Files whose whole patch is shown. */
  shown: number
}

/**
 * The answer with as many whole patches (in file order) as the budget holds; when not even the first one
 * fits, that one is cut at a line boundary. `render(n, cut)` builds the text with n whole patches, or with
 * the first patch cut to `cut` lines.
 */
export async function fitPatches (patches: string[], render: (n: number, cut?: number) => string, budget: number, tokenizer: Tokenizer, signal?: AbortSignal): Promise<FittedPatches> {
  const whole = await fitLargest(0, patches.length, n => ({ text: render(n), info: n }), budget, tokenizer, signal)
  if (whole !== undefined && (whole.n > 0 || patches.length === 0)) return { text: whole.text, shown: whole.n }
  // Cut to fewer lines than it has: all of them would be the whole patch, which did not fit.
  const lines = patches.length === 0 ? 0 : patches[0].replace(/\n$/, '').split('\n').length
  const cut = await fitLargest(1, lines - 1, k => ({ text: render(0, k), info: k }), budget, tokenizer, signal)
  if (cut !== undefined) return { text: cut.text, shown: 0 }
  return { text: render(0), shown: 0 }
}

/** The first `k` lines of a patch (fewer than it has), with a marker saying how many were left out. */
export function cutPatch (patch: string, k: number): string {
  const lines = patch.replace(/\n$/, '').split('\n')
  return `${lines.slice(0, k).join('\n')}\n… ${lines.length - k} more lines of this patch left out (budget)\n`
}
