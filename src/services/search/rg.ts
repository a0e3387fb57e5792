import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { toolError, type ToolError } from '../../base/errors.js'
import { withoutServerPaths } from '../server-paths.js'
import { renice } from './priority.js'
import { openStderrFile, readStderrFile } from './rg-stderr.js'

/** How a ripgrep run ended. */
export type RgEnd = 'exit' | 'stopped' | 'deadline' | 'shutdown' | 'aborted'

/** Files ripgrep skipped without a word on stdout, counted from its `--debug` lines. */
export interface RgSkipped {
  /** Files that hold binary data (a NUL byte): skipped, or cut at it after some matches. */
  binary: number
  /** Files over `--max-filesize`. */
  tooLarge: number
}

/** Outcome of one ripgrep process. */
export interface RgRun {
  end: RgEnd
  /** Exit code when it exited by itself (0 match, 1 none, 2 error), else null. */
  code: number | null
  /** The signal that ended it when it did not stop by itself or by us (SIGKILL from an OOM killer, SIGSEGV…). */
  signal: NodeJS.Signals | null
  /** True when stdout ended in the middle of a record (ripgrep ends every record it writes). */
  truncated: boolean
  /** stderr without its debug lines, capped, absolute paths removed. */
  stderr: string
  /** Bytes read from stdout. */
  bytes: number
  skipped: RgSkipped
}

/** Receives one over-long record piece by piece instead of holding it whole. */
export interface LongRecordSink {
  push(piece: Buffer): void
  /** The record ended; like onRecord, false stops the run. */
  end(): boolean | undefined
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
  /** Longest record held whole (default 1 MiB); a longer one goes to `onLongRecord`, or is dropped without it. */
  maxRecordBytes?: number
  /** Starts a sink for a record longer than maxRecordBytes (it gets the pieces held so far, then the rest). */
  onLongRecord?: () => LongRecordSink
  /** Texts to replace in stderr messages (e.g. a /proc/<pid>/fd path by the name the caller gave). */
  names?: Array<[string, string]>
  /** Live children, for cancellation tests and shutdown. */
  live?: Set<number>
  /** Where the run registers how to end it early, as at its deadline (end 'shutdown': the server winds down). */
  stops?: Set<() => void>
  /** Bytes for ripgrep's stdin (searched as `-`); destroyed when the run ends. */
  input?: Readable
  /** Niceness of the child, every thread of it (priority.ts); without it, the server's own. */
  niceness?: number
}

const STDERR_CAP = 16 * 1024
/** Longest stderr line looked at (a longer one is cut: a debug line naming a huge path, say). */
const STDERR_LINE_CAP = 64 * 1024
const MAX_RECORD_BYTES = 1024 * 1024
/** Longest stretch of stdout parsing before yielding to the event loop, ms. */
const BURST_MS = 20
const DEBUG = 'rg: DEBUG|'
// ripgrep 15's --debug lines for files it skips silently: the printer on binary data, the walker on --max-filesize.
const BINARY_LINE = /: found binary data at offset \d+$/
const SIZE_LINE = /^rg: DEBUG\|ignore::walk\|[^ ]+ ignoring .*: \d+ bytes$/

/** Classifies one `--debug` line of ripgrep 15: a skipped binary or too-large file, or undefined. */
export function debugSkip (line: string): keyof RgSkipped | undefined {
  if (!line.startsWith(DEBUG)) return undefined
  if (BINARY_LINE.test(line)) return 'binary'
  if (SIZE_LINE.test(line)) return 'tooLarge'
  return undefined
}

/** Spawns ripgrep with an argument array (never a shell) and streams its stdout records to `onRecord`. */
export async function runRg (options: RunRgOptions): Promise<RgRun> {
  const { rgPath, args, cwd, signal, deadline, separator, onRecord, onLongRecord, live, stops, input, niceness } = options
  const maxRecord = options.maxRecordBytes ?? MAX_RECORD_BYTES
  const skipped: RgSkipped = { binary: 0, tooLarge: 0 }
  if (signal?.aborted === true) return { end: 'aborted', code: null, signal: null, truncated: false, stderr: '', bytes: 0, skipped }
  let stderr = ''
  let errLine = ''
  const onErrLine = (line: string): void => {
    const skip = debugSkip(line)
    if (skip !== undefined) skipped[skip]++
    else if (!line.startsWith(DEBUG) && stderr.length < STDERR_CAP) stderr += (line + '\n').slice(0, STDERR_CAP - stderr.length)
  }
  const onErrText = (text: string): void => {
    let from = 0
    let nl = text.indexOf('\n')
    while (nl !== -1) {
      onErrLine(errLine + text.slice(from, nl))
      errLine = ''
      from = nl + 1
      nl = text.indexOf('\n', from)
    }
    if (errLine.length < STDERR_LINE_CAP) errLine += text.slice(from, from + STDERR_LINE_CAP - errLine.length)
  }
  const errFile = openStderrFile()
  const ended = await new Promise<Omit<RgRun, 'stderr' | 'skipped'>>((resolve) => {
    const errTo = errFile ?? 'pipe'
    let child: ChildProcess
    if (input === undefined) {
      child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', errTo], windowsHide: true })
    } else {
      const fed = spawn(rgPath, args, { cwd, stdio: ['pipe', 'pipe', errTo], windowsHide: true })
      // ripgrep stops reading when it is stopped: a write to its closed stdin is expected, not an error. A source that
      // fails ends the input; its owner (who listens for that) decides what the run is worth.
      const stdin = fed.stdin as Writable
      stdin.on('error', () => {})
      input.on('error', () => stdin.end())
      input.pipe(stdin)
      child = fed
    }
    const stdout = child.stdout as Readable
    const pid = child.pid
    if (pid !== undefined) {
      live?.add(pid)
      if (niceness !== undefined) renice(pid, niceness)
    }
    let end: RgEnd = 'exit'
    let stopped = false
    let bytes = 0
    let carry: Buffer[] = []
    let carryBytes = 0
    // The record being streamed to a sink (too long to hold), or 'drop' when there is no sink to take it.
    let long: LongRecordSink | 'drop' | undefined

    const stop = (why: RgEnd): void => {
      if (stopped) return
      stopped = true
      end = why
      child.kill('SIGKILL')
    }
    const onAbort = (): void => stop('aborted')
    signal?.addEventListener('abort', onAbort, { once: true })
    const timer = setTimeout(() => stop('deadline'), Math.max(0, deadline - Date.now()))
    const atShutdown = (): void => stop('shutdown')
    stops?.add(atShutdown)

    /** Takes a piece of the current record (no separator in it). */
    const take = (piece: Buffer): void => {
      if (piece.length === 0) return
      if (long !== undefined) {
        if (long !== 'drop') long.push(piece)
        return
      }
      carry.push(piece)
      carryBytes += piece.length
      if (carryBytes > maxRecord) {
        // Never hold more than maxRecord of one record: what is held goes to the sink, the rest streams to it.
        long = onLongRecord?.() ?? 'drop'
        if (long !== 'drop') for (const held of carry) long.push(held)
        carry = []
        carryBytes = 0
      }
    }
    /** Ends the current record: true to go on. */
    const close = (): boolean => {
      let verdict: boolean | undefined
      if (long !== undefined) {
        verdict = long === 'drop' ? true : long.end()
        long = undefined
      } else {
        // Pieces of a record are joined once, at its end (repeated concat would be quadratic).
        const record = carry.length === 1 ? carry[0] : Buffer.concat(carry)
        verdict = onRecord(record)
      }
      carry = []
      carryBytes = 0
      return verdict !== false
    }

    // libuv reads a full pipe many times per poll phase; a burst longer than BURST_MS pauses the stream until the
    // check phase, so timers and other requests run between bursts (no event-loop stall on huge outputs).
    let burstStart = 0
    let inBurst = false
    const endBurst = (): void => { inBurst = false }
    const resume = (): void => { if (!stopped) stdout.resume() }
    stdout.on('data', (chunk: Buffer) => {
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
        if (carry.length === 0 && long === undefined) {
          const record = chunk.subarray(start, at)
          if (record.length <= maxRecord) {
            if (onRecord(record) === false) {
              stop('stopped')
              return
            }
          } else {
            take(record)
            if (!close()) {
              stop('stopped')
              return
            }
          }
        } else {
          take(chunk.subarray(start, at))
          if (!close()) {
            stop('stopped')
            return
          }
        }
        start = at + 1
        at = chunk.indexOf(separator, start)
      }
      if (start < chunk.length) take(chunk.subarray(start))
      if (performance.now() - burstStart > BURST_MS) {
        stdout.pause()
        setImmediate(resume)
      }
    })
    if (child.stderr !== null) child.stderr.setEncoding('utf8').on('data', onErrText)
    let settled = false
    const finish = (code: number | null, exitSignal: NodeJS.Signals | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      input?.destroy()
      stops?.delete(atShutdown)
      signal?.removeEventListener('abort', onAbort)
      if (pid !== undefined) live?.delete(pid)
      // A record without its separator is a cut one: never parsed, and the run is reported as truncated.
      const truncated = !stopped && (carry.length > 0 || long !== undefined)
      resolve({ end, code: stopped ? null : code, signal: stopped ? null : exitSignal, truncated, bytes })
    }
    child.on('error', (err) => {
      stderr += `rg: ${err.message}`
      finish(2, null)
    })
    child.on('close', (code, exitSignal) => finish(code, exitSignal))
  })
  if (errFile !== undefined) await readStderrFile(errFile, onErrText)
  if (errLine !== '') onErrLine(errLine)
  let message = stderr
  for (const [from, to] of options.names ?? []) message = message.split(from).join(to)
  return { ...ended, stderr: cleanMessage(message, cwd), skipped }
}

/** Removes absolute paths from a ripgrep message: the root becomes '.', anything else a placeholder. */
export function cleanMessage (message: string, root: string): string {
  return withoutServerPaths(message, root.length > 1 ? [[root + '/', ''], [root, '.']] : [], '[path outside the workspace]').trim()
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

/** ripgrep shows a pattern as it compiled it, inside `(?:…)`: show the caller's own, with the markers moved under it. */
function asWritten (text: string, pattern: string): string {
  const lines = text.split('\n')
  const at = lines.indexOf(`    (?:${pattern})`)
  if (at < 0) return text
  lines[at] = `    ${pattern}`
  const marks = lines[at + 1]
  if (marks !== undefined && /^ {4} *\^/.test(marks)) lines[at + 1] = `    ${marks.slice(4).replace(/^ {0,3}/, '')}`
  return lines.join('\n')
}

/** Maps a ripgrep failure before any search (exit 2) to a tool error, or undefined when it is a per-file problem. */
export function classifyRgError (stderr: string, pattern: string): ToolError | undefined {
  const text = asWritten(tidy(stderr), pattern)
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
