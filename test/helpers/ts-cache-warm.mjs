// `npm test`'s pretest step beside tsc and eslint: transpiles every source and test the suite will load into the
// loader's cache (ts-hooks.mjs) now, once. On a fresh clone the cache is empty, and tap's first four test processes
// would each transpile the same few hundred modules at once.
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { transpiled } from './ts-hooks.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// Fixtures are data the tests read, not modules they load.
const files = ['src', 'test'].flatMap(top => readdirSync(path.join(ROOT, top), { recursive: true, encoding: 'utf8' })
  .filter(name => name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.startsWith('fixtures'))
  .map(name => path.join(ROOT, top, name)))
for (const file of files) await transpiled(file)
