import t from 'tap'
import fc from 'fast-check'
import { runs } from '../helpers/property.js'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import { displayName, displayText, parseName } from '../../src/services/workspace/path-names.js'

// Property-based tests of the one path resolver. For arbitrary strings built from a grammar of hostile
// pieces, (1) a resolved path is really inside the root, and (2) the answer for any spelling is
// byte-identical whether the outside targets exist or not: no fact about the outside, not even existence.

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-prop-')))
t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
const root = path.join(base, 'root')
const outside = path.join(base, 'outside')
const hidden = path.join(base, 'outside-moved-away')
fs.mkdirSync(path.join(root, 'src', 'deep'), { recursive: true })
fs.mkdirSync(path.join(outside, 'dir'), { recursive: true })
fs.writeFileSync(path.join(root, 'src', 'f.txt'), 'inside\n')
fs.writeFileSync(path.join(root, 'src', 'deep', 'g.txt'), 'deep\n')
fs.writeFileSync(path.join(outside, 'exists.txt'), 'SECRET\n')
fs.writeFileSync(path.join(outside, 'dir', 'inner.txt'), 'SECRET\n')
fs.symlinkSync('../outside', path.join(root, 'l-out'))
fs.symlinkSync(path.join(outside, 'exists.txt'), path.join(root, 'l-abs'))
fs.symlinkSync('src', path.join(root, 'l-in'))
fs.symlinkSync('..', path.join(root, 'src', 'up'))
fs.symlinkSync('../../outside/dir', path.join(root, 'src', 'l-rel-out'))
fs.symlinkSync('l-loop', path.join(root, 'l-loop'))
fs.writeFileSync(Buffer.from(path.join(root, 'odd-\xff-name').replace('\xff', '\uFFFF').replace('\uFFFF', '')), '')
fs.writeFileSync(Buffer.concat([Buffer.from(root + '/bytes-'), Buffer.from([0xff, 0x0a]), Buffer.from('.txt')]), 'odd bytes\n')

const PIECES = [
  '..', '.', '/', '//', '\\', '..\\', 'src', 'f.txt', 'deep', 'g.txt', 'up', 'l-out', 'l-abs', 'l-in', 'l-rel-out', 'l-loop',
  'outside', 'exists.txt', 'missing.txt', 'dir', 'inner.txt', '%2e%2e', '%2f', '~', 'file://', '\u0000', '\n', 'é', '日本',
  'a'.repeat(300), root, outside, base, 'bytes-\\xff\\x0a.txt', '\\x5c', '\\x', '\\xZZ',
  // The escape spellings of '.', '/' and '..' (the reported defect), weighted in.
  '\\x2e\\x2e\\x2f', '\\x2e\\x2e\\x2f', '\\x2f', '\\x2e', '..\\x2f', '\\x2e\\x2e'
]
const escape = fc.integer({ min: 0, max: 255 }).map(b => `\\x${b.toString(16).padStart(2, '0')}`)
const piece = fc.oneof(fc.constantFrom(...PIECES), escape, fc.string({ maxLength: 4 }))
const hostilePath = fc.array(piece, { minLength: 1, maxLength: 8 }).map(parts => parts.join(''))

/** Everything an answer says, as text: a result's fields or an error's message. */
async function answer (work: () => Promise<unknown>): Promise<string> {
  try {
    return 'ok ' + JSON.stringify(await work(), (_k, v) => Buffer.isBuffer(v) ? v.toString('latin1') : v)
  } catch (err) {
    const e = err as { toolCode?: string, message?: string }
    return e.toolCode !== undefined ? `${e.toolCode} ${e.message}` : `THROWN ${String(err)}`
  }
}

async function everything (ws: WorkspaceService, p: string): Promise<string[]> {
  return [
    await answer(() => ws.resolve(p)),
    await answer(() => ws.resolve(p, { mustExist: false })),
    await answer(async () => { const s = await ws.inspect(p); return { ...s, stats: { kind: s.kind, size: s.stats.size, mode: s.stats.mode } } }),
    await answer(() => ws.readText(p))
  ]
}

t.test('every spelling resolves inside the root or fails, and never differently for an outside target that exists or not', async (t) => {
  const ws = await createWorkspace({ root, log: pino({ level: 'silent' }) })
  let checked = 0
  await fc.assert(fc.asyncProperty(hostilePath, async (p) => {
    const resolved = await ws.resolve(p, { mustExist: false }).catch(() => undefined)
    if (resolved !== undefined) {
      // Inside by the kernel's own reckoning, for the deepest existing ancestor.
      let probe = Buffer.isBuffer(resolved.fsPath) ? resolved.fsPath : Buffer.from(resolved.fsPath)
      while (!fs.existsSync(probe)) probe = Buffer.from(path.dirname(probe.toString('latin1')), 'latin1')
      const real = fs.realpathSync.native(probe, { encoding: 'buffer' }).toString('latin1')
      if (path.relative(Buffer.from(root).toString('latin1'), real).startsWith('..')) throw new Error(`${JSON.stringify(p)} resolved outside: ${real}`)
    }
    const present = await everything(ws, p)
    fs.renameSync(outside, hidden)
    let absent: string[]
    try {
      absent = await everything(ws, p)
    } finally {
      fs.renameSync(hidden, outside)
    }
    checked++
    // An absolute outside path may only appear when the input itself spelled it (an echo, not a fact).
    for (const text of present) if (text.includes('SECRET') || (text.includes(outside) && !p.includes(path.basename(base)))) throw new Error(`${JSON.stringify(p)} told about the outside: ${text}`)
    if (JSON.stringify(present) !== JSON.stringify(absent)) throw new Error(`${JSON.stringify(p)} answers differ:\n${present.join('\n')}\n---\n${absent.join('\n')}`)
  }), runs(600))
  t.ok(checked >= 600, `${checked} generated spellings checked`)
})

t.test('escapes never yield ".", "/" or NUL, so decoding cannot add a component; every name round-trips', async (t) => {
  fc.assert(fc.property(fc.string({ maxLength: 40 }), fc.array(escape, { maxLength: 6 }), (text, escapes) => {
    const bytes = parseName(text + escapes.join(''))
    const literal = Buffer.from(text + escapes.join(''))
    const slashes = (b: Buffer): number => b.filter(x => x === 0x2f).length
    const dots = (b: Buffer): number => b.filter(x => x === 0x2e).length
    if (slashes(bytes) !== slashes(literal) || dots(bytes) !== dots(literal) || bytes.includes(0) !== literal.includes(0)) {
      throw new Error(`decoding changed the structure of ${JSON.stringify(text)}`)
    }
  }), runs(2000))
  fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 24 }), (raw) => {
    const name = Buffer.from(raw.filter(b => b !== 0x2f && b !== 0))
    const shown = displayName(name)
    // eslint-disable-next-line no-control-regex -- the property is that none survive
    if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(shown)) throw new Error(`control character printed: ${JSON.stringify(shown)}`)
    if (!parseName(shown).equals(name)) throw new Error(`${JSON.stringify(shown)} does not read back`)
  }), runs(3000))
  t.pass('structure preserved and names round-trip')
})

t.test('a name with nothing to escape is shown as it is, and any other exactly as the escaping pattern says', async (t) => {
  // eslint-disable-next-line no-control-regex -- the characters that can forge output are the point
  const unsafe = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\\(?=x[0-9a-fA-F]{2})/g
  const reference = (text: string): string => text.replace(unsafe, ch => [...Buffer.from(ch)].map(b => `\\x${b.toString(16).padStart(2, '0')}`).join(''))
  const odd = fc.constantFrom('\\', '\\x41', '\\xZZ', '\u0085', '\u2028', '\u202b', '\u2067', '\u2069', '\u206a', '\u009f', '\u00a0', '\u007e', '\t', 'x', 'é')
  fc.assert(fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 6 }), odd), { maxLength: 8 }), (parts) => {
    const text = parts.join('')
    if (displayText(text) !== reference(text)) throw new Error(`${JSON.stringify(text)} shown as ${JSON.stringify(displayText(text))}`)
  }), runs(3000))
  t.equal(displayText('plain name.c'), 'plain name.c')
})

t.test('the reported escape spelling of /etc/passwd is refused before the disk, like its plain form', async (t) => {
  const ws = await createWorkspace({ root, log: pino({ level: 'silent' }) })
  for (const p of ['\\x2e\\x2e\\x2f\\x2e\\x2e\\x2fetc\\x2fpasswd', '..\\x2f..\\x2fetc\\x2fpasswd', 'src\\x2f..\\x2f..\\x2f..\\x2fetc']) {
    const err = await ws.resolve(p).catch((e: { toolCode?: string }) => e)
    t.equal((err as { toolCode?: string }).toolCode, 'PATH_NOT_FOUND', `${p} is a name in the root that does not exist`)
  }
  t.equal((await ws.resolve('bytes-\\xff\\x0a.txt')).relative, 'bytes-\\xff\\x0a.txt', 'a control byte in a name reads back from its escape')
})
