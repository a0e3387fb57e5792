import t from 'tap'
import fc from 'fast-check'
import assert from 'node:assert/strict'
import ignore from 'ignore'
import { runs } from '../../helpers/property.js'
import { literalOf, screenOf } from '../../../src/services/workspace/ignore-screen.js'
import { decide, levelBelow, parseRules, type IgnoreMatch, type RuleLevel } from '../../../src/services/workspace/ignore-rules.js'

// The screen in front of `ignore` (ignore-screen.ts) never hides a path a rule of the set could decide: checked
// against `ignore` itself over generated rule sets (escapes, brackets, globstars, negations, marks, trailing
// spaces, characters whose case folds oddly) and paths, some made from the rules so they match.

/** Pieces of a rule: literals of every case class, wildcards, brackets, escapes and the characters around them. */
const rulePiece = fc.constantFrom(
  'a', 'b', 'A', 'B', 'ab', 'o', '.', '-', '_', '#', '!', ' ', '~', 'é', 'É', '\u212A', 'k', 'ſ', 's', 'S', 'σ', 'ς', 'Σ',
  '*', '**', '?', '/', '[ab]', '[!a]', '[a-c]', '[[:alpha:]]', '[', ']', '\\', '\\*', '\\ ', '\\!', '\\#', '\\[', '\\/',
  '{', '}', '(', ')', '$', '^', '+', '|', '\uFEFF', '\r', '/**/', '**/', '/**', '.o', 'mod', '@', '"', ':'
)
const ruleLine = fc.tuple(
  fc.constantFrom('', '', '', '!', '#', '/', '\\!', '\\#', '\uFEFF', '\uFEFF!', '\uFEFF#', '!/', '!!'),
  fc.array(rulePiece, { maxLength: 5 }),
  fc.constantFrom('', '', '', ' ', '  ', '/', '\\ ', '\\', '/**')
).map(([head, body, tail]) => head + body.join('') + tail)
const ruleLines = fc.array(ruleLine, { minLength: 1, maxLength: 6 })

/** Pieces of a path segment: the rules' literals in other cases, wildcard characters as names, dots. */
const segmentPiece = fc.constantFrom(
  'a', 'b', 'A', 'B', 'ab', 'o', 'O', '.', '-', '_', '#', '!', ' ', '~', 'é', 'É', '\u212A', 'k', 'K', 'ſ', 's', 'S', 'σ', 'ς', 'Σ',
  '*', '?', '[', ']', '\\', '\uFEFF', '.o', 'MOD', 'mod', '@', '"', ':', 'x', 'İ', 'ı', 'i', 'I'
)
const segment = fc.array(segmentPiece, { minLength: 1, maxLength: 4 }).map(p => p.join('')).filter(s => s !== '.' && s !== '..')
const path = fc.record({ segments: fc.array(segment, { minLength: 1, maxLength: 4 }), dir: fc.boolean() })

/** Paths made from a rule line so that it, or something close, matches: wildcards filled, case flipped. */
function pathsFrom (line: string): string[][] {
  const body = line.replace(/^\uFEFF/, '').replace(/^[!#]/, '').replace(/\\(.)/g, '$1').replace(/\[[^\]]*\]?/g, 'a').replace(/\*\*/g, 'x/y').replace(/[*?]/g, 'o')
  const segments = body.split('/').map(s => s.trim()).filter(s => s !== '' && s !== '.' && s !== '..')
  if (segments.length === 0) return []
  return [segments, segments.map(s => s.toUpperCase()), ['deep', ...segments], [...segments, 'under']]
}

/** `ignore`'s own verdict for a path, the way parseRules builds a rule set. */
function plain (lines: string[]): ReturnType<typeof ignore> {
  return ignore({ allowRelativePaths: true }).add(lines.map((pattern, i) => ({ pattern, mark: `x:${i + 1}` })))
}

/** decide() as it was before the screen: every level's rules tested. */
function unscreened (levels: readonly RuleLevel[], name: string, isDirectory: boolean): IgnoreMatch | undefined {
  if (name === '.git' && isDirectory) return { where: 'built-in', pattern: '.git/' }
  let decided: IgnoreMatch | undefined
  for (const { rules, dir, below } of levels) {
    const result = rules.test(below + (isDirectory ? `${name}/` : name))
    if (result.ignored) decided = { where: result.rule?.mark ?? dir, pattern: result.rule?.pattern ?? '' }
    else if (result.unignored) decided = undefined
  }
  return decided
}

t.test('a path no segment of which passes the screen is neither ignored nor re-included by the set (against ignore itself)', async (t) => {
  let screened = 0
  let decided = 0
  fc.assert(fc.property(ruleLines, fc.array(path, { maxLength: 6 }), (lines, paths) => {
    const screen = screenOf(lines)
    const rules = plain(lines)
    const all = [...paths.map(p => p.segments), ...lines.flatMap(pathsFrom)]
    for (const segments of all) {
      for (const dir of [false, true]) {
        const full = segments.join('/') + (dir ? '/' : '')
        const verdict = rules.test(full)
        if (verdict.ignored || verdict.unignored) decided++
        if (screen === null || segments.some(s => screen.test(s))) continue
        screened++
        assert.deepEqual({ ...verdict }, { ignored: false, unignored: false }, `${JSON.stringify(lines)} ${JSON.stringify(full)}`)
      }
    }
  }), runs(400))
  t.ok(screened > 300, `paths screened out: ${screened}`)
  t.ok(decided > 200, `paths the rules decided: ${decided}`)
})

t.test('decide with screened levels answers what testing every level answers, levels carried down folder by folder', async (t) => {
  fc.assert(fc.property(fc.array(ruleLines, { minLength: 1, maxLength: 3 }), fc.array(segment, { maxLength: 3 }), fc.array(segment, { minLength: 1, maxLength: 4 }), (sets, above, names) => {
    const made = sets.map((lines, i) => parseRules(i === 0 ? '.' : `d${i}`, [{ file: '.gitignore', text: lines.join('\n') }]))
    // Levels as a walk holds them: the start folder's with a path from their folder (worked out on first use), then carried down.
    let levels: RuleLevel[] = made.flatMap((rules, i) => rules === null ? [] : [{ rules, dir: `d${i}`, below: above.slice(i).map(s => `${s}/`).join('') }])
    const reference = levels.map(l => ({ ...l }))
    for (const name of names) {
      for (const dir of [false, true]) {
        assert.deepEqual(decide(levels, name, dir), unscreened(reference, name, dir), `${JSON.stringify(sets)} ${JSON.stringify(reference.map(l => l.below))} ${JSON.stringify(name)} ${dir}`)
      }
      levels = levels.map(l => levelBelow(l, name))
      for (const l of reference) l.below += `${name}/`
    }
  }), runs(300))
  t.pass('every verdict the same')
})

t.test('the screen of a Linux-like rule set passes what its rules name and nothing else; unscreenable rules test every path', async (t) => {
  const screen = screenOf(['.*', '!.gitignore', '*.o', '*.mod.c', '*.c.[012]*.*', 'Module.symvers', '/vmlinux*', '/include/config/', 'patches-*', '*~', '\\#*#', 'sphinx_*/', '# a comment', '', '   '])

  t.ok(screen !== null)
  for (const name of ['main.c', 'Makefile', 'drivers', 'Kconfig', 'slab.h', 'configs']) t.notOk(screen?.test(name), `${name} is screened out`)
  for (const name of ['.git', 'foo.o', 'FOO.O', 'x.mod.c', 'module.SYMVERS', 'vmlinux.lds', 'include', 'patches-1', 'a~', '#x#', 'sphinx_out', 'a.c.0.b']) t.ok(screen?.test(name), `${name} passes`)
  t.equal(screenOf(['*', 'a']), null, 'a rule of wildcards only')
  t.equal(screenOf(['[ab]c']), null, 'a rule that starts with a bracket')
  t.equal(screenOf(['\uFEFF  ']), null, 'a mark then spaces: a rule of the mark, or none')
  t.equal(screenOf(['# only', 'comments'.replace(/.*/, '#')])?.test('anything'), false, 'no rule: nothing passes')
  t.strictSame(literalOf('!foo/*.c'), { text: 'foo', start: true, end: true })
  t.strictSame(literalOf('\uFEFF!foo'), { text: 'foo', start: false, end: true }, 'after a mark a "!" may be literal: no segment start')
  t.strictSame(literalOf('a\\*bcd'), { text: 'bcd', start: false, end: true }, 'an escaped character ends a run, and the run after it starts no segment')
  t.equal(literalOf('#x'), null)
})
