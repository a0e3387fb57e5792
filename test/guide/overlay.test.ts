import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createOverlaySource, parseOverlay } from '../../src/guide/overlay.js'
import { captureLogger } from '../helpers/engine.js'

const dir = mkdtempSync(join(tmpdir(), 'wmcp-overlay-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('parses entries with description, returns, errors, see_also and examples', async (t) => {
  const parsed = parseOverlay('tools:\n  read_files:\n    description: Long text.\n    returns: Lines.\n    errors: [PATH_NOT_FOUND]\n    see_also: [get_file_info]\n    examples:\n      - comment: One file\n        arguments: { "files": [{ "path": "a.ts" }] }\n')

  t.same(parsed.problems, [])
  t.match(parsed.tools.read_files, {
    description: 'Long text.',
    returns: 'Lines.',
    errors: ['PATH_NOT_FOUND'],
    see_also: ['get_file_info'],
    examples: [{ comment: 'One file', arguments: { files: [{ path: 'a.ts' }] } }]
  })
})

t.test('shape problems are reported per field and the bad part is dropped', async (t) => {
  const parsed = parseOverlay('read_files:\n  descripton: typo\n  errors: PATH_NOT_FOUND\n  examples:\n    - arguments: {}\n    - comment: No args\n      arguments: [1]\n')

  t.equal(parsed.problems.length, 4)
  t.match(parsed.problems.join('\n'), /read_files\.descripton: unknown key/)
  t.match(parsed.problems.join('\n'), /read_files\.errors: must be a list/)
  t.match(parsed.problems.join('\n'), /examples\[0\]: needs a 'comment'/)
  t.match(parsed.problems.join('\n'), /examples\[1\]: 'arguments' must be a JSON object/)
  t.same(parsed.tools.read_files.examples, [])
})

t.test('a missing, empty or corrupt file is a logged warning and no entries', async (t) => {
  const { log, lines } = captureLogger()
  const empty = join(dir, 'empty.yaml')
  const corrupt = join(dir, 'corrupt.yaml')
  writeFileSync(empty, '')
  writeFileSync(corrupt, 'tools: [unclosed\n  : : :')

  const missing = createOverlaySource({ file: join(dir, 'nope.yaml'), log }).current()
  const blank = createOverlaySource({ file: empty, log }).current()
  const broken = createOverlaySource({ file: corrupt, log }).current()

  t.match([missing.status, blank.status, broken.status], ['missing', 'empty', 'corrupt'])
  t.same([missing.tools, blank.tools, broken.tools], [{}, {}, {}])
  t.equal(lines.filter(l => l.level === 40).length, 3, 'three warnings')
})

t.test('the file is re-read when it changes, without a restart', async (t) => {
  const file = join(dir, 'live.yaml')
  writeFileSync(file, 'a_tool:\n  description: first\n')
  const source = createOverlaySource({ file })

  const before = source.current()
  const same = source.current()
  writeFileSync(file, 'a_tool:\n  description: second version\n')
  const after = source.current()

  t.equal(same, before, 'unchanged file → the cached snapshot')
  t.not(after.version, before.version)
  t.equal(after.tools.a_tool.description, 'second version')
})

t.test('an overlay inside the served root is a workspace file: a link to a file outside is not read', async (t) => {
  const root = join(dir, 'root')
  mkdirSync(join(root, 'sub'), { recursive: true })
  writeFileSync(join(dir, 'outside.yaml'), 'tools:\n  read_files:\n    description: OUTSIDE secret text\n')
  symlinkSync(join(dir, 'outside.yaml'), join(root, 'docs.yaml'))
  symlinkSync(dir, join(root, 'sub', 'up'))
  writeFileSync(join(root, 'inside.yaml'), 'tools:\n  read_files:\n    description: Inside text.\n')

  const viaLink = createOverlaySource({ file: join(root, 'docs.yaml'), root }).current()
  const viaDirLink = createOverlaySource({ file: join(root, 'sub', 'up', 'outside.yaml'), root }).current()
  const inside = createOverlaySource({ file: join(root, 'inside.yaml'), root }).current()
  const operatorsOwn = createOverlaySource({ file: join(dir, 'outside.yaml'), root }).current()

  t.equal(viaLink.status, 'missing')
  t.equal(viaDirLink.status, 'missing')
  t.equal(inside.tools.read_files.description, 'Inside text.')
  t.equal(operatorsOwn.status, 'ok', 'a file outside the root named by the operator is the operator\'s choice')
})

t.test('every shape problem of an entry is named; a top level that is not a mapping is corrupt', async (t) => {
  const parsed = parseOverlay('tools:\n  list_directory: just text\n  find_files:\n    description: "   "\n    examples: not a list\n')

  t.match(parsed.problems, [
    'list_directory: must be a mapping of description, returns, errors, see_also, examples',
    'find_files.description: must be non-empty text',
    'find_files.examples: must be a list of { comment, arguments }'
  ])
  t.equal(parsed.tools.list_directory, undefined, 'the bad entry is dropped')
  t.throws(() => parseOverlay('- a\n- b\n'), /the top level must be a mapping/)

  const { log, lines } = captureLogger()
  const file = join(dir, 'problems.yaml')
  writeFileSync(file, 'tools:\n  read_files:\n    descripton: typo\n')
  const overlay = createOverlaySource({ file, log }).current()
  t.equal(overlay.status, 'ok')
  t.ok(lines.some(l => l.msg === 'tool docs overlay has problems' && Array.isArray(l.problems)), 'problems are logged once')
})

t.test('an overlay over the size cap is not read: the registry text is used and the reason logged', async (t) => {
  const { log, lines } = captureLogger()
  const file = join(dir, 'huge.yaml')
  writeFileSync(file, `tools: {}\n# ${'x'.repeat(5 * 1024 * 1024)}\n`)

  const overlay = createOverlaySource({ file, log }).current()

  t.equal(overlay.status, 'missing')
  t.ok(lines.some(l => l.msg === 'tool docs overlay unreadable; using the registry text'))
})
