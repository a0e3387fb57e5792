import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { systemClock, type Clock } from '../../src/services/clock.js'
import { createTokenizer, type Tokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import type { ToolContext, ToolResult } from '../../src/tool-api/define-tool.js'

/** What createHostileWorkspace builds. */
export interface HostileWorkspace {
  /** Canonical workspace root (`<base>/root`). */
  root: string
  /** Sibling directory outside the root (`<base>/outside`), holding `secret.txt` and `dir/inner.txt`. */
  outside: string
  /** Unique string stored only outside the root (outside/ and root-evil/); it must never reach a response. */
  canary: string
  /** The temp directory holding root/, outside/ and root-evil/. */
  base: string
  /** Name (relative to root, as bytes) of the file whose name is not valid UTF-8. */
  nonUtf8Name: Buffer
  /** Whether the FIFO could be created (mkfifo missing → false). */
  hasFifo: boolean
}

/** Options for createHostileWorkspace. */
export interface HostileWorkspaceOptions {
  /** Also write `big.txt` (20 MB, 200,000 fixed-width lines). Default true. */
  big?: boolean
  /** Add `unreadable.txt` and `locked/` (mode 000) and make the rest world-readable, for non-root permission tests. */
  permissions?: boolean
}

/** Lines of big.txt are exactly this long including '\n', so line N starts at byte (N-1)*BIG_LINE_BYTES. */
export const BIG_LINE_BYTES = 100
/** Number of lines in big.txt. */
export const BIG_LINES = 200_000

/** Line N (1-based) of big.txt, without its newline. */
export function bigLine (n: number): string {
  const head = `line ${String(n).padStart(9, '0')} `
  return head + 'x'.repeat(BIG_LINE_BYTES - 1 - head.length)
}

function write (file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

function writeBig (file: string): void {
  const fd = fs.openSync(file, 'w')
  try {
    const chunkLines = 10_000
    for (let start = 1; start <= BIG_LINES; start += chunkLines) {
      const lines: string[] = []
      for (let n = start; n < start + chunkLines && n <= BIG_LINES; n++) lines.push(bigLine(n))
      fs.writeSync(fd, lines.join('\n') + '\n')
    }
  } finally {
    fs.closeSync(fd)
  }
}

function chmodTree (dir: Buffer, skip: Set<string>): void {
  fs.chmodSync(dir, 0o755)
  // Buffer names: the non-UTF-8 file name is not reachable through a decoded string.
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const full = Buffer.concat([dir, Buffer.from('/'), entry.name as unknown as Buffer])
    if (skip.has(full.toString()) || entry.isSymbolicLink()) continue
    if (entry.isDirectory()) chmodTree(full, skip)
    else if (entry.isFile()) fs.chmodSync(full, 0o644)
  }
}

/**
 * A temp workspace full of traps, removed on teardown:
 * - root/: src/ files, docs, .gitignore'd files (root and nested rules, plus .ignore), hidden files,
 *   node_modules/ and .git/, links inside the root, links to outside files and dirs (relative and absolute), a link to the
 *   sibling-prefix dir, a symlink loop, a dir link to an ancestor, a FIFO, a binary file, a long
 *   line, odd names (leading `-`, spaces, unicode, a non-UTF-8 name), optionally a 20 MB file.
 * - outside/secret.txt and root-evil/secret.txt: hold the canary.
 */
export function createHostileWorkspace (t: { teardown(fn: () => void): void }, options: HostileWorkspaceOptions = {}): HostileWorkspace {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wsmcp-')))
  t.teardown(() => {
    // Restore modes first so removal works even for 000 entries.
    try { chmodTree(Buffer.from(base), new Set()) } catch {}
    fs.rmSync(base, { recursive: true, force: true })
  })
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  const evil = path.join(base, 'root-evil')
  const canary = `CANARY-${randomUUID()}`

  write(path.join(outside, 'secret.txt'), `top secret ${canary}\n`)
  write(path.join(outside, 'dir', 'inner.txt'), `inner ${canary}\n`)
  write(path.join(evil, 'secret.txt'), `evil ${canary}\n`)

  write(path.join(root, 'README.md'), '# Fixture\n\nA workspace for tests.\n')
  write(path.join(root, 'src', 'index.ts'), "import { helper } from './util/helpers.js'\n\nexport const main = () => helper(1)\n")
  write(path.join(root, 'src', 'app.ts'), 'export function app () {\n  return 42\n}\n')
  write(path.join(root, 'src', 'util', 'helpers.ts'), 'export function helper (n: number) {\n  return n + 1\n}\n')
  write(path.join(root, 'src', 'util', 'helpers.test.ts'), "import { helper } from './helpers.js'\nhelper(2)\n")
  write(path.join(root, 'docs', 'guide.md'), '# Guide\n\nline three\nline four\n')
  write(path.join(root, 'empty.txt'), '')
  write(path.join(root, 'no-newline.txt'), 'one\ntwo\nthree')
  write(path.join(root, 'crlf.txt'), 'alpha\r\nbeta\r\ngamma\r\n')
  write(path.join(root, 'long-line.txt'), `short\n${'y'.repeat(5000)}\nend\n`)
  write(path.join(root, 'binary.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x00, 0xff]))

  write(path.join(root, '.gitignore'), 'ignored.log\nbuild/\n*.secret\nnode_modules/\n')
  write(path.join(root, 'ignored.log'), 'ignored log\n')
  write(path.join(root, 'build', 'out.js'), 'console.log(1)\n')
  write(path.join(root, 'node_modules', 'pkg', 'index.js'), 'module.exports = 1\n')
  write(path.join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  write(path.join(root, 'nested', '.gitignore'), '*.tmp\n')
  write(path.join(root, 'nested', 'a.tmp'), 'temp\n')
  write(path.join(root, 'nested', 'keep.txt'), 'keep\n')
  write(path.join(root, '.ignore'), 'scratch/\n')
  write(path.join(root, 'scratch', 'notes.txt'), 'notes\n')
  write(path.join(root, '.env'), 'HIDDEN=1\n')
  write(path.join(root, '.hidden', 'config.json'), '{}\n')

  write(path.join(root, '-dash.txt'), 'dash\n')
  write(path.join(root, 'with space.txt'), 'space\n')
  write(path.join(root, 'unicodé-日本.txt'), 'unicode\n')
  const nonUtf8Name = Buffer.concat([Buffer.from('bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')])
  fs.writeFileSync(Buffer.concat([Buffer.from(root + '/'), nonUtf8Name]), 'bytes name\n')

  fs.symlinkSync('../outside/secret.txt', path.join(root, 'link-to-secret'))
  fs.symlinkSync('../outside', path.join(root, 'link-to-outside-dir'))
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link-abs-secret'))
  fs.symlinkSync('../root-evil', path.join(root, 'link-to-evil'))
  fs.symlinkSync('src/index.ts', path.join(root, 'link-inside'))
  fs.symlinkSync('src', path.join(root, 'link-inside-dir'))
  fs.symlinkSync('does-not-exist', path.join(root, 'link-dangling'))
  fs.symlinkSync('loop-b', path.join(root, 'loop-a'))
  fs.symlinkSync('loop-a', path.join(root, 'loop-b'))
  fs.mkdirSync(path.join(root, 'loopdir'))
  fs.symlinkSync('..', path.join(root, 'loopdir', 'up'))

  let hasFifo = true
  try {
    execFileSync('mkfifo', [path.join(root, 'fifo')])
  } catch {
    hasFifo = false
  }
  if (options.big !== false) writeBig(path.join(root, 'big.txt'))

  if (options.permissions === true) {
    write(path.join(root, 'unreadable.txt'), 'unreadable\n')
    write(path.join(root, 'locked', 'inside.txt'), 'locked\n')
    const skip = new Set([path.join(root, 'unreadable.txt'), path.join(root, 'locked')])
    chmodTree(Buffer.from(base), skip)
    fs.chmodSync(path.join(root, 'unreadable.txt'), 0o000)
    fs.chmodSync(path.join(root, 'locked'), 0o000)
  }
  return { root, outside, canary, base, nonUtf8Name, hasFifo }
}

/** The stable code a tool error carries (`toolCode`), or 'ok' when the work succeeds; takes a promise, a value or a thunk. */
export async function toolCodeOf (work: unknown): Promise<string> {
  try {
    await (typeof work === 'function' ? work() : work)
    return 'ok'
  } catch (err) {
    return (err as { toolCode?: string }).toolCode ?? `not a tool error: ${String(err)}`
  }
}

/** A ToolContext for calling `tool.run(args, ctx)` directly in tests; `unserved`: tools the server would not serve. */
export function toolContext (signal: AbortSignal = new AbortController().signal, unserved: Iterable<string> = []): ToolContext {
  return {
    signal,
    log: pino({ level: 'silent' }),
    progress: async () => {},
    notify: async () => {},
    client: { capabilities: {}, request: async () => ({}) },
    taskBudgetMs: undefined,
    input: undefined,
    closeStream: () => {},
    unserved: new Set(unserved)
  }
}

/** The hostile fixture plus real services over it (workspace, tokenizer, clock). */
export async function hostileServices (t: { teardown(fn: () => void): void }, options: HostileWorkspaceOptions = {}): Promise<HostileWorkspace & { workspace: WorkspaceService, tokenizer: Tokenizer, clock: Clock }> {
  const fx = createHostileWorkspace(t, options)
  const workspace = await createWorkspace({ root: fx.root, log: pino({ level: 'silent' }) })
  return { ...fx, workspace, tokenizer: createTokenizer(), clock: systemClock }
}

/** The text of a tool result's first content block. */
export function textOf (result: ToolResult): string {
  const first = result.content[0]
  return first?.type === 'text' ? first.text : ''
}

/** A new folder under the system's temporary one, by its real path, removed when the test ends. */
export function tempDir (t: { teardown(fn: () => void): void }, prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}
