import { lstat } from 'node:fs/promises'
import path from 'node:path'
import { findExecutable } from '../executables.js'
import { toolError, type ToolError } from '../../base/errors.js'
import { withoutServerPaths } from '../server-paths.js'
import type { Logger } from '../../base/logger.js'
import type { Limiter } from '../limiter.js'
import { DETAIL_FORMAT, LOG_FORMAT, parseBlame, parseChanges, parseDetail, parseLog, splitPatch, type BlameLine, type CommitDetail, type CommitSummary, type FileChange } from './parse.js'
import { runGit, type GitRun, type GitTarget } from './run.js'

export type { BlameLine, CommitDetail, CommitSummary, FileChange } from './parse.js'

/** Filters of a history listing. */
export interface LogQuery {
  /** Full hash to start from (already resolved). */
  from: string
  /** Repository-relative path to follow ('' for the whole tree). */
  path: string
  author?: string
  grep?: string
  since?: string
  until?: string
  skip: number
  count: number
}

/** Two sides of a diff: full hashes, or `to` undefined for the working tree. */
export interface DiffSides {
  from: string
  to?: string
  /** Repository-relative path filter ('' for all), or several paths. */
  path: string | string[]
}

/** Read-only access to the workspace's git repository, through the hardened runner. */
export interface GitService {
  /** `git version` output, e.g. "2.39.5". */
  readonly version: string
  /** Resolves a revision (branch, tag, hash prefix, HEAD~2 …) to a full commit hash; REF_NOT_FOUND otherwise. */
  resolveCommit(ref: string, field: string, signal?: AbortSignal): Promise<string>
  /** Commits from `from` matching the filters, newest first; one more than asked tells whether more exist. */
  log(query: LogQuery, signal?: AbortSignal): Promise<CommitSummary[]>
  /** One commit's metadata and full message. */
  commit(hash: string, signal?: AbortSignal): Promise<CommitDetail>
  /** Files a commit changed against its first parent (the root commit: everything it added). */
  commitChanges(hash: string, path: string, signal?: AbortSignal): Promise<FileChange[]>
  /** The patch of a commit against its first parent, one text per file in commitChanges' order (fewer when it is too large). */
  commitPatch(hash: string, path: string, context: number, signal?: AbortSignal): Promise<string[]>
  /** Files that differ between two commits, or a commit and the working tree. */
  diffChanges(sides: DiffSides, signal?: AbortSignal): Promise<FileChange[]>
  /** The patch between two sides, one text per file in diffChanges' order (fewer when it is too large). */
  diffPatch(sides: DiffSides, context: number, signal?: AbortSignal): Promise<string[]>
  /** A file's bytes at a commit; undefined when the path is not a file there. */
  fileAt(hash: string, path: string, maxBytes: number, signal?: AbortSignal): Promise<{ bytes: Buffer, truncated: boolean } | undefined>
  /** Who last changed each line of `path` at `hash`, for lines start..end. */
  blame(hash: string, path: string, start: number, end: number, signal?: AbortSignal): Promise<BlameLine[]>
  /** Lines of a file at a commit (for blame's range checks). */
  lineCount(hash: string, path: string, signal?: AbortSignal): Promise<number | undefined>
}

/** The repositories of the served roots (several roots, several histories). */
export interface GitRepositories {
  /** The repository of a root, by name, or why that root has none. */
  of(root: string): GitService | string
  /** Names of the roots that have one, in root order. */
  readonly names: string[]
}

/** The repositories of some roots (name → service or reason), or why none has one: then no history tool is served. */
export function gitRepositories (found: Array<{ name: string, git: GitService | string }>): GitRepositories | string {
  const names = found.filter(f => typeof f.git !== 'string').map(f => f.name)
  if (names.length === 0) return found.map(f => found.length === 1 ? f.git : `${f.name}: ${String(f.git)}`).join('; ')
  const byName = new Map(found.map(f => [f.name, f.git]))
  // lexical() names only served roots, so every name asked for is in the map.
  return { of: (root) => byName.get(root) as GitService | string, names }
}

/** Options of createGit. */
export interface GitOptions {
  root: string
  log: Logger
  limiter: Limiter
  /** Every served root: a `git` inside any of them is never run. Default: this root. */
  servedRoots?: readonly string[]
  /** The git binary; default: the first `git` on PATH outside the served roots (absolute entries only). */
  gitPath?: string
}

/** Oldest git whose GIT_CONFIG_COUNT (command-line scope configuration) the runner relies on. */
const MIN_VERSION = [2, 31]
/** Patch bytes read at most: the files past it are answered with their line counts and the call for each. */
export const PATCH_BYTES = 16 * 1024 * 1024
/** Revision text accepted: a ref name, hash, or `~`/`^`/`@{}` suffixes; never an option, a path or a range. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const REVISION = /^(?!-)[^\s:\\\u0000-\u001f\u007f]{1,200}$/
const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '-M']
/** A merge shows what it brought to its first parent (the branch it was merged into). */
const SHOW_FLAGS = ['--format=', '--diff-merges=first-parent']
/** Drivers a repository's own config may define: each runs a program, so each is blanked for the run. */
const DRIVER_KEY = /^(filter|diff|merge)\..+\.(clean|smudge|process|textconv|command|driver|required)$/

/** Why the root's repository cannot be served, or undefined when it can (a plain `.git` folder, all inside). */
async function repositoryProblem (root: string): Promise<string | undefined> {
  const gitDir = path.join(root, '.git')
  const stats = await lstat(gitDir).catch(() => undefined)
  if (stats === undefined) return 'the root is not the top of a git work tree (no .git folder)'
  if (!stats.isDirectory()) return '.git is not a folder (a linked work tree or submodule keeps its repository outside the root)'
  for (const [file, why] of [['commondir', 'a linked work tree'], ['objects/info/alternates', 'borrows objects from another repository']]) {
    if (await lstat(path.join(gitDir, file)).then(() => true, () => false)) return `the repository is ${why}, outside the root`
  }
  return undefined
}

/** Creates the git service, or returns why it cannot serve (no git, no repository at the root …). */
export async function createGit (opts: GitOptions): Promise<GitService | string> {
  const gitPath = opts.gitPath ?? await findExecutable('git', opts.servedRoots ?? [opts.root])
  if (gitPath === undefined) return 'git is not installed (no git on PATH)'
  const problem = await repositoryProblem(opts.root)
  if (problem !== undefined) return problem
  const target: GitTarget = { gitPath, gitDir: path.join(opts.root, '.git'), workTree: opts.root }
  // Both at once: each is a spawn, and this runs while the server starts.
  const [probe, head] = await Promise.all([runGit(target, ['version']), runGit(target, ['rev-parse', '--git-dir'])])
  const version = /(\d+)\.(\d+)(\.\d+)?/.exec(probe.stdout.toString())
  if (probe.code !== 0 || version === null) return `${gitPath} does not run: ${probe.stderr}`
  const [major, minor] = [Number(version[1]), Number(version[2])]
  if (major < MIN_VERSION[0] || (major === MIN_VERSION[0] && minor < MIN_VERSION[1])) return `git ${version[0]} is too old (${MIN_VERSION.join('.')} or later is needed)`
  if (head.code !== 0) return `git does not accept the repository: ${head.stderr}`
  return gitService(target, version[0], opts.limiter)
}

function gitService (target: GitTarget, version: string, limiter: Limiter): GitService {
  // Every run takes a search slot: on a large history, log and blame cost what a ripgrep scan does.
  const git = (args: string[], signal?: AbortSignal, maxBytes?: number, config?: Array<[string, string]>): Promise<GitRun> =>
    limiter.run('search', signal, async () => {
      const run = await runGit(target, args, { signal, maxBytes, config })
      if (run.aborted) throw toolError('CANCELLED', 'the git command was cancelled', 'call again')
      return run
    })
  const failed = (what: string, run: GitRun): ToolError =>
    toolError('GIT_FAILED', `git ${what} failed: ${withoutServerPaths(run.stderr, [[target.workTree, '.']]) || `exit code ${String(run.code)}`}`, { step: 'list-commits' })
  const pathspec = (p: string | string[]): string[] => ['--', ...(Array.isArray(p) ? p : p === '' ? [] : [p])]

  /** The repository's own driver settings, each blanked: its clean filter would run on a working-tree read. */
  async function neutralisers (signal?: AbortSignal): Promise<Array<[string, string]>> {
    const run = await runGit(target, ['config', '-z', '--includes', '--get-regexp', '^(filter|diff|merge)\\.'], { signal })
    const keys = run.stdout.toString('latin1').split('\0').map(entry => entry.split('\n')[0]).filter(key => DRIVER_KEY.test(key))
    return [...new Set(keys)].map(key => [key, key.endsWith('.required') ? 'false' : ''])
  }

  async function changes (args: string[], what: string, signal?: AbortSignal, config?: Array<[string, string]>): Promise<FileChange[]> {
    const run = await git([...args.slice(0, 1), '--raw', '--numstat', '-z', ...DIFF_FLAGS, ...args.slice(1)], signal, PATCH_BYTES, config)
    if (run.code !== 0 && !run.truncated) throw failed(what, run)
    return parseChanges(run.stdout)
  }

  async function patch (args: string[], what: string, context: number, signal?: AbortSignal, config?: Array<[string, string]>): Promise<string[]> {
    const run = await git([...args.slice(0, 1), '-p', `-U${context}`, ...DIFF_FLAGS, ...args.slice(1)], signal, PATCH_BYTES, config)
    if (run.code !== 0 && !run.truncated) throw failed(what, run)
    const texts = splitPatch(run.stdout.toString('utf8'))
    // Cut at the byte cap, the last file's patch is partial: it is dropped, so every text returned is whole.
    return run.truncated ? texts.slice(0, -1) : texts
  }

  const sidesArgs = (sides: DiffSides): string[] =>
    ['diff', '--end-of-options', sides.from, ...(sides.to === undefined ? [] : [sides.to]), ...pathspec(sides.path)]

  return {
    version,

    async resolveCommit (ref, field, signal) {
      if (!REVISION.test(ref)) {
        throw toolError('INVALID_ARGUMENT', `${field} must be one revision: a branch, tag, commit hash or HEAD~N (no spaces, ':' or leading '-')`, `e.g. ${field}="HEAD~1" or ${field}="main"`)
      }
      const run = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], signal)
      const hash = run.stdout.toString('latin1').trim()
      if (run.code !== 0 || !/^[0-9a-f]{40,64}$/.test(hash)) {
        throw toolError('REF_NOT_FOUND', `${field}: "${ref}" names no commit in this repository`, { step: 'name-a-commit' })
      }
      return hash
    },

    async log (query, signal) {
      const args = ['log', '-z', `--format=${LOG_FORMAT}`, `--skip=${query.skip}`, `--max-count=${query.count}`, '--no-mailmap', '--regexp-ignore-case', '--fixed-strings']
      if (query.author !== undefined) args.push(`--author=${query.author}`)
      if (query.grep !== undefined) args.push(`--grep=${query.grep}`)
      if (query.since !== undefined) args.push(`--since=${query.since}`)
      if (query.until !== undefined) args.push(`--until=${query.until}`)
      args.push('--end-of-options', query.from, ...pathspec(query.path))
      const run = await git(args, signal)
      if (run.code !== 0) throw failed('log', run)
      return parseLog(run.stdout)
    },

    async commit (hash, signal) {
      const run = await git(['log', '-1', '-z', `--format=${DETAIL_FORMAT}`, '--no-mailmap', '--end-of-options', hash, '--'], signal)
      const detail = run.code === 0 ? parseDetail(run.stdout) : undefined
      if (detail === undefined) throw failed('show', run)
      return detail
    },

    commitChanges: (hash, p, signal) => changes(['show', ...SHOW_FLAGS, '--end-of-options', hash, ...pathspec(p)], 'show', signal),
    commitPatch: (hash, p, context, signal) => patch(['show', ...SHOW_FLAGS, '--end-of-options', hash, ...pathspec(p)], 'show', context, signal),
    // A working-tree side reads files through git: the repository's filter drivers must not run on them.
    diffChanges: async (sides, signal) => changes(sidesArgs(sides), 'diff', signal, sides.to === undefined ? await neutralisers(signal) : undefined),
    diffPatch: async (sides, context, signal) => patch(sidesArgs(sides), 'diff', context, signal, sides.to === undefined ? await neutralisers(signal) : undefined),

    fileAt,

    async lineCount (hash, p, signal) {
      const file = await fileAt(hash, p, PATCH_BYTES, signal)
      if (file === undefined) return undefined
      const { bytes } = file
      let lines = 0
      for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) lines++
      return bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? lines + 1 : lines
    },

    async blame (hash, p, start, end, signal) {
      // blame takes no --end-of-options; `hash` is a full hash from resolveCommit, so it cannot be an option.
      const run = await git(['blame', '--porcelain', '--no-textconv', `-L${start},${end}`, hash, '--', p], signal, PATCH_BYTES)
      if (run.code !== 0) throw failed('blame', run)
      return parseBlame(run.stdout)
    }
  }

  async function fileAt (hash: string, p: string, maxBytes: number, signal?: AbortSignal): Promise<{ bytes: Buffer, truncated: boolean } | undefined> {
    // One run: git refuses a path that is missing or not a blob (a folder) with a non-zero exit.
    const run = await git(['cat-file', 'blob', '--end-of-options', `${hash}:${p}`], signal, maxBytes)
    return run.code !== 0 && !run.truncated ? undefined : { bytes: run.stdout, truncated: run.truncated }
  }
}
