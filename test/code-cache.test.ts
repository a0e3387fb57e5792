// The CommonJS bundle loader behind the stdio command's code cache: Node's module semantics inside the
// bundle, a cache V8 refuses (the script runs anyway), and an absent bundle. V8 keeps its own per-process cache
// of compiled sources, which answers before a given cache is even read: so each bundle here has a source of its
// own, and acceptance across processes is proven where it matters, by the shipped bundle's own start with the
// cache the build trained (test/bin/stdio.test.ts reads `codeCache: accepted` from its ready line).
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { cacheFileOf, compileBundle, loadBundle } from '../src/code-cache.js'

let bundles = 0

/** A two-file CommonJS bundle in a temp folder; the entry reports what Node's wrapper gave it. */
function bundleDir (t: Test): string {
  const dir = t.testdir({
    'dep.cjs': 'module.exports = { answer: 42 }\n',
    'entry.cjs': [
      '#!/usr/bin/env node',
      `// bundle ${++bundles}`,
      "const { answer } = require('./dep.cjs')",
      "const { join } = require('node:path')",
      'exports.seen = { answer, file: __filename, dir: __dirname, joined: join(__dirname, "x"), self: this === module.exports }',
      'exports.double = (n) => n * 2',
      ''
    ].join('\n')
  })
  return path.join(dir, 'entry.cjs')
}

t.test('a bundle runs as Node would run the file: require next to it, __filename, __dirname, this', async (t) => {
  const file = bundleDir(t)
  const compiled = compileBundle(file)
  t.equal(compiled.cacheRejected, false, 'no cache given, none refused')
  const exports = compiled.run() as { seen: Record<string, unknown>, double: (n: number) => number }
  t.strictSame(exports.seen, { answer: 42, file, dir: path.dirname(file), joined: path.join(path.dirname(file), 'x'), self: true })
  t.equal(exports.double(21), 42)
})

t.test('loadBundle: the fallback when the bundle is absent; else the bundle, with the cache beside it when there is one', async (t) => {
  const dir = t.testdir({})
  t.strictSame(await loadBundle(path.join(dir, 'missing.cjs'), async () => 'fallback'), { exports: 'fallback', cache: 'none' })

  type Entry = { seen: { answer: number }, double: (n: number) => number }
  const unused = async (): Promise<Entry> => { throw new Error('the fallback ran for a bundle that exists') }
  const file = bundleDir(t)
  const plain = await loadBundle(file, unused)
  t.equal(plain.cache, 'none', 'no cache file: compiled from source')
  t.equal(plain.exports.seen.answer, 42)
  t.equal(cacheFileOf(file), `${file}.cache`)

  // A cache this process trained (as the build's training run does) is taken; that a new process takes the shipped
  // one is the stdio smoke test's.
  const trained = bundleDir(t)
  const compiled = compileBundle(trained)
  ;(compiled.run() as Entry).double(1)
  writeFileSync(cacheFileOf(trained), compiled.script.createCachedData())
  const taken = await loadBundle(trained, unused)
  t.equal(taken.cache, 'accepted', 'a cache V8 made is accepted')
  t.equal(taken.exports.double(21), 42)

  const other = bundleDir(t)
  writeFileSync(cacheFileOf(other), 'stale')
  const stale = await loadBundle(other, unused)
  t.equal(stale.cache, 'rejected', 'a stale cache beside the bundle is read and refused')
  t.equal(stale.exports.double(3), 6, 'not fatal')
})
