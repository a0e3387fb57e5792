import { spawn } from 'node:child_process'
import path from 'node:path'

/** Where and how git runs: one repository whose work tree is the workspace root. */
export interface GitTarget {
  /** Absolute path of the git binary, found once at start (never looked up in the workspace). */
  gitPath: string
  /** The repository's git directory (`<root>/.git`). */
  gitDir: string
  /** The work tree: the workspace root. */
  workTree: string
}

/** Options of one git run. */
export interface GitRunOptions {
  /** Aborts the run; the child is killed. */
  signal?: AbortSignal
  /** Stop reading (and kill git) after this many stdout bytes; `truncated` says so. Default 8 MiB. */
  maxBytes?: number
  /** Extra configuration for this run, as [key, value] pairs (the driver neutralisers). */
  config?: Array<[string, string]>
}

/** Outcome of one git run. */
export interface GitRun {
  code: number | null
  stdout: Buffer
  /** stdout stopped at maxBytes. */
  truncated: boolean
  /** The first line of stderr, capped (git's own `fatal: …`), for error messages. */
  stderr: string
  aborted: boolean
}

const DEFAULT_MAX_BYTES = 8 * 1024 * 1024
const STDERR_CAP = 4096

/**
 * Configuration that could make a read-only git command run a program, read outside the workspace,
 * reach the network or write: pinned in command-line scope, which outranks every config file (the
 * repository's own `.git/config` included — it is workspace content, so it is untrusted).
 */
export const PINNED_CONFIG: ReadonlyArray<[string, string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.attributesFile', '/dev/null'],
  ['core.untrackedCache', 'false'],
  ['diff.orderFile', '/dev/null'],
  ['log.showSignature', 'false'],
  ['mailmap.file', '/dev/null'],
  ['mailmap.blob', ''],
  ['blame.ignoreRevsFile', ''],
  ['protocol.allow', 'never'],
  ['credential.helper', ''],
  ['color.ui', 'never'],
  ['i18n.logOutputEncoding', 'UTF-8'],
  ['core.quotePath', 'false'],
  ['diff.noprefix', 'false'],
  ['diff.mnemonicPrefix', 'false'],
  ['diff.relative', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false']
]

/**
 * Variables the child sees: built from nothing, so no inherited GIT_* (GIT_EXTERNAL_DIFF, GIT_SSH …) reaches
 * it. Configuration travels as GIT_CONFIG_KEY_n/VALUE_n (command-line scope, git ≥ 2.31): unlike `-c k=v`,
 * a key whose subsection holds `=` cannot be misread.
 */
export function gitEnvironment (target: GitTarget, config: ReadonlyArray<[string, string]> = []): NodeJS.ProcessEnv {
  // safe.directory is honoured only in command-line or global scope: the operator chose this root.
  const pairs = [...PINNED_CONFIG, ['safe.directory', target.workTree] as [string, string], ...config]
  const env: NodeJS.ProcessEnv = {
    PATH: [path.dirname(target.gitPath), '/usr/bin', '/bin'].join(path.delimiter),
    // No global or system config: only the pinned command line and the repository's own, neutralised.
    HOME: '/nonexistent',
    XDG_CONFIG_HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_DIR: target.gitDir,
    GIT_WORK_TREE: target.workTree,
    // Discovery never walks above the root, and pathspec magic (`:(top)`, `:/`) is plain text.
    GIT_CEILING_DIRECTORIES: path.dirname(target.workTree),
    GIT_LITERAL_PATHSPECS: '1',
    // Reading never takes the index lock nor rewrites the index (git status/diff refresh it by default).
    GIT_OPTIONAL_LOCKS: '0',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: '',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PAGER: 'cat',
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_COUNT: String(pairs.length)
  }
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key
    env[`GIT_CONFIG_VALUE_${i}`] = value
  })
  return env
}

/** Runs git with an argument array (never a shell) in the work tree and collects its stdout, bounded. */
export function runGit (target: GitTarget, args: readonly string[], options: GitRunOptions = {}): Promise<GitRun> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES
  const { signal } = options
  return new Promise<GitRun>((resolve) => {
    if (signal?.aborted === true) {
      resolve({ code: null, stdout: Buffer.alloc(0), truncated: false, stderr: '', aborted: true })
      return
    }
    const child = spawn(target.gitPath, ['--no-pager', ...args], {
      cwd: target.workTree,
      env: gitEnvironment(target, options.config),
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true
    })
    const chunks: Buffer[] = []
    let bytes = 0
    let truncated = false
    let aborted = false
    let stderr = ''
    const onAbort = (): void => {
      aborted = true
      child.kill('SIGKILL')
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated) return
      const room = maxBytes - bytes
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room))
        bytes = maxBytes
        truncated = true
        child.kill('SIGKILL')
        return
      }
      chunks.push(chunk)
      bytes += chunk.length
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (text: string) => {
      if (stderr.length < STDERR_CAP) stderr += text.slice(0, STDERR_CAP - stderr.length)
    })
    const finish = (code: number | null): void => {
      signal?.removeEventListener('abort', onAbort)
      resolve({ code, stdout: Buffer.concat(chunks), truncated, stderr: stderr.trim().split('\n')[0], aborted })
    }
    // A spawn failure (binary removed since start) reads as a failed run; 'close' follows 'error' either way.
    child.on('error', () => { stderr ||= 'git could not be started' })
    child.on('close', finish)
  })
}
