import t from 'tap'
import fc from 'fast-check'
import assert from 'node:assert/strict'
import picomatch from 'picomatch'
import { runs } from '../../helpers/property.js'
import { compileGlob, globMatches, nameMayMatch } from '../../../src/services/workspace/glob-match.js'
import { compileGlobs } from '../../../src/services/workspace/walk-filter.js'

// Globs compiled once (glob-match.ts) answer exactly what picomatch's own matcher answers, and the base-name
// screen a walk uses before it builds a path never turns away a path the glob matches: both against picomatch
// itself, over generated globs (braces, extglobs, classes, escapes, globstars, negations) and paths, some made
// from the glob so they match.

const globPiece = fc.constantFrom(
  'a', 'b', 'A', '.', '-', '_', 'é', ' ', 'c', '.c', 'ab', '*', '*', '**', '?', '/', '/', '**/', '{a,b}', '{,.c}', '{1..3}',
  '[ab]', '[!a]', '@(a|b)', '!(a)', '+(a)', '*(b)', '?(a)', '\\*', '(', ')', '!', '#', '$', '^', '+', '|', ',', '"', "'", '{', '}'
)
const glob = fc.tuple(fc.constantFrom('', '', '**/', '**/', '!', '*/', './'), fc.array(globPiece, { minLength: 1, maxLength: 5 })).map(([head, body]) => head + body.join(''))

const segmentPiece = fc.constantFrom('a', 'b', 'A', '.c', 'c', 'ab', 'x', 'é', '*', '[ab]', '{a,b}', '(a)', '!', '#', ' ', '-', '.a', '1', '2', "'", '"', '**', '+')
const segment = fc.array(segmentPiece, { minLength: 1, maxLength: 4 }).map(p => p.join('')).filter(s => s !== '.' && s !== '..')
const pathArb = fc.array(segment, { minLength: 1, maxLength: 4 }).map(s => s.join('/'))

/** Paths made from a glob so that it, or something close, matches: wildcards and sets filled in (a negated set by `/` too). */
function pathsFrom (g: string): string[] {
  const fill = (negated: string): string => g.replace(/^\.\//, '').replace(/\*\*/g, 'x/ab').replace(/\*/g, 'c').replace(/\?/g, 'a')
    .replace(/\[(!?)([^\]]*)\]/g, (_m, not: string, set: string) => not === '!' ? negated : set.slice(0, 1) || 'a')
    .replace(/\{([^},]*)[^}]*\}/g, '$1').replace(/[@!+]\(([^|)]*)[^)]*\)/g, '$1').replace(/\\/g, '')
  const made = [fill('z'), fill('/')].map(f => f.split('/').filter(s => s !== '' && s !== '.' && s !== '..')).filter(s => s.length > 0)
  return [g, ...made.flatMap(segments => [segments.join('/'), `deep/${segments.join('/')}`, segments[segments.length - 1]])]
}

/** Compiles as compileGlobs always has with picomatch's matcher; undefined for a glob picomatch refuses. */
function reference (g: string): ((p: string) => boolean) | undefined {
  try {
    return picomatch(g, { dot: true, strictBrackets: true, basename: !g.includes('/') })
  } catch {
    return undefined
  }
}

t.test('a compiled glob matches exactly the paths picomatch\'s matcher matches, and the name screen keeps all of them', async (t) => {
  let matched = 0
  let screened = 0
  fc.assert(fc.property(glob, fc.array(pathArb, { maxLength: 6 }), (g, paths) => {
    const theirs = reference(g)
    if (theirs === undefined) {
      assert.throws(() => compileGlob(g))
      return
    }
    const ours = compileGlob(g)
    for (const p of [...paths, ...pathsFrom(g)]) {
      const expected = theirs(p)
      assert.equal(globMatches(ours, p), expected, `${JSON.stringify(g)} on ${JSON.stringify(p)}`)
      const name = p.slice(p.lastIndexOf('/') + 1)
      if (expected) {
        matched++
        assert.ok(nameMayMatch(ours, name), `${JSON.stringify(g)} matches ${JSON.stringify(p)}: its name ${JSON.stringify(name)} must pass`)
      } else if (!nameMayMatch(ours, name)) {
        screened++
      }
    }
  }), runs(1500))
  t.ok(matched > 300, `paths matched: ${matched}`)
  t.ok(screened > 300, `paths screened out by their name: ${screened}`)
})

t.test('the name screen of the globs find_files is given most', async (t) => {
  const screen = (g: string, name: string): boolean => nameMayMatch(compileGlob(g), name)

  t.notOk(screen('**/slab*.c', 'slub.c'))
  t.ok(screen('**/slab*.c', 'slab_common.c'))
  t.notOk(screen('**/*.rs', 'main.c'))
  t.ok(screen('*.{c,h}', 'x.h'))
  t.ok(screen('src/**/*.ts', 'main.c'), 'a glob whose folders matter: every name may match')
  t.ok(screen('**/a[!b]c', 'c'), 'a class may stand for a "/": every name may match')
  t.ok(screen('**/[id].ts', '[id].ts'), 'a name that is the glob\'s tail itself (picomatch matches a path equal to its glob)')
  t.strictSame(['a', 'b/c', ''].map(p => globMatches(compileGlob('x/'), p)), [false, false, false])
  t.ok(globMatches(compileGlob('a'), 'x/a/'), 'a base name before a trailing "/"')
  t.equal(compileGlobs([], 'exclude').mayMatchName('any'), false, 'no glob: nothing may match')
})
