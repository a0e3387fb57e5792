import { spawn } from 'node:child_process'
import { toolError, type ToolError } from '../errors.js'

/** How a ripgrep run ended. */
export type RgEnd = 'exit' | 'stopped' | 'deadline' | 'aborted'

/** Outcome of one ripgrep process. */
export interface RgRun {
  end: RgEnd
  /** Exit code when it exited by itself (0 match, 1 none, 2 error), else null. */
  code: number | null
  /** stderr, capped, absolute paths removed. */
  stderr: string
  /** Bytes read from stdout. */
  bytes: number
}

/** Options of runRg. */
export interface RunRgOptions {
  rgPath: string
  args: string[]
  cwd: string
  /** Aborts the run (client cancellation); the child is killed and the promise resolves with end 'aborted'. */
  signal?: AbortSignal
  /** Absolute wall-clock time (Date.now()) after which the child is killed (end 'deadline'). */
  deadline: number
  /** Record separator of stdout: '\n' for JSON lines, '\0'-terminated records are split by the caller. */
  separator: number
  /** Called for every complete record (without its separator); return false to stop the run (end 'stopped'). */
  onRecord: (record: Buffer) => boolean | undefined
  /** Live children, for cancellation tests and shutdown. */
  live?: Set<number>
}

const STDERR_CAP = 16 * 1024
/** Longest stretch of stdout parsing before yielding to the event loop, ms. */
const BURST_MS = 20

/** Spawns ripgrep with an argument array (never a shell) and streams its stdout records to `onRecord`. */
export function runRg (options: RunRgOptions): Promise<RgRun> {
  const { rgPath, args, cwd, signal, deadline, separator, onRecord, live } = options
  return new Promise<RgRun>((resolve) => {
    if (signal?.aborted === true) {
      resolve({ end: 'aborted', code: null, stderr: '', bytes: 0 })
      return
    }
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true })
    const pid = child.pid
    if (pid !== undefined) live?.add(pid)
    let end: RgEnd = 'exit'
    let stopped = false
    let bytes = 0
    let stderr = ''
    let carry: Buffer[] = []

    const stop = (why: RgEnd): void => {
      if (stopped) return
      stopped = true
      end = why
      child.kill('SIGKILL')
    }
    const onAbort = (): void => stop('aborted')
    signal?.addEventListener('abort', onAbort, { once: true })
    const timer = setTimeout(() => stop('deadline'), Math.max(0, deadline - Date.now()))

    // libuv reads a full pipe many times per poll phase; a burst longer than BURST_MS pauses the stream until the
    // check phase, so timers and other requests run between bursts (no event-loop stall on huge outputs).
    let burstStart = 0
    let inBurst = false
    const endBurst = (): void => { inBurst = false }
    const resume = (): void => { if (!stopped) child.stdout.resume() }
    child.stdout.on('data', (chunk: Buffer) => {
      // Keep draining after a stop so the pipe closes and 'close' fires.
      if (stopped) return
      if (!inBurst) {
        inBurst = true
        burstStart = performance.now()
        setImmediate(endBurst)
      }
      bytes += chunk.length
      let start = 0
      let at = chunk.indexOf(separator)
      while (at !== -1) {
        const piece = chunk.subarray(start, at)
        // Pieces of a long record are joined once, at its end (repeated concat would be quadratic).
        const record = carry.length === 0 ? piece : Buffer.concat([...carry, piece])
        carry = []
        start = at + 1
        if (onRecord(record) === false) {
          stop('stopped')
          return
        }
        at = chunk.indexOf(separator, start)
      }
      if (start < chunk.length) carry.push(chunk.subarray(start))
      if (performance.now() - burstStart > BURST_MS) {
        child.stdout.pause()
        setImmediate(resume)
      }
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (text: string) => {
      if (stderr.length < STDERR_CAP) stderr += text.slice(0, STDERR_CAP - stderr.length)
    })
    let settled = false
    const finish = (code: number | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (pid !== undefined) live?.delete(pid)
      // A killed child may leave a truncated last record: it is dropped, never parsed.
      if (!stopped && carry.length > 0) onRecord(Buffer.concat(carry))
      resolve({ end, code: stopped ? null : code, stderr: cleanMessage(stderr, cwd), bytes })
    }
    child.on('error', (err) => {
      stderr += `rg: ${err.message}`
      finish(2)
    })
    child.on('close', (code) => finish(code))
  })
}

/** Removes absolute paths from a ripgrep message: the root becomes '.', anything else a placeholder. */
export function cleanMessage (message: string, root: string): string {
  const withRoot = root.length > 1 ? message.split(root + '/').join('').split(root).join('.') : message
  return withRoot.replace(/(^|[\s'"(=:])\/[^\s'")]+/g, '$1[path outside the workspace]').trim()
}

/** Strips ripgrep's `rg: ` prefixes and the caret diagram noise to one readable sentence block. */
function tidy (stderr: string): string {
  return stderr
    .split('\n')
    .map(line => line.replace(/^rg: /, '').trimEnd())
    .filter(line => line.length > 0 && !/^Consider enabling PCRE2/.test(line) && !/^and look-around\.?$/.test(line))
    .join('\n')
    .slice(0, 800)
}

/** Maps a ripgrep failure before any search (exit 2) to a tool error, or undefined when it is a per-file problem. */
export function classifyRgError (stderr: string, pattern: string): ToolError | undefined {
  const text = tidy(stderr)
  if (/regex parse error|error parsing regex|the literal .* is not allowed/.test(stderr)) {
    if (/not supported/.test(stderr)) {
      return toolError('UNSUPPORTED_REGEX_FEATURE', `ripgrep's linear-time engine rejected the pattern:\n${text}`,
        'look-around and backreferences are not available; rewrite without them (for example search the literal part and use context_lines), or pass literal=true')
    }
    const escaped = pattern.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')
    return toolError('INVALID_REGEX', `ripgrep could not parse the pattern:\n${text}`,
      `the syntax is ripgrep's (Rust regex), not JavaScript; escape metacharacters (e.g. pattern=${JSON.stringify(escaped.slice(0, 120))}) or pass literal=true`)
  }
  if (/size limit|too big|too large/.test(stderr)) {
    return toolError('REGEX_TOO_COMPLEX', `the pattern is too large to compile:\n${text}`,
      'reduce counted repetitions such as {1000} or nested classes, or split the search into simpler patterns')
  }
  if (/glob/.test(stderr)) {
    return toolError('INVALID_GLOB', `a glob in include/exclude is invalid:\n${text}`, 'use globs such as "*.ts", "src/**/*.test.ts" or "!**/vendor/**"')
  }
  return undefined
}
