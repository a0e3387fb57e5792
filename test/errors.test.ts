import t from 'tap'
import { readFileSync } from 'node:fs'
import { ERROR_CONSTRUCTORS, TOOL_ERROR_CODES, toolError } from '../src/base/errors.js'

const readme = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8')

t.test('each error constructor\'s key is its code (fastify errors.js style)', async (t) => {
  for (const [key, Ctor] of Object.entries(ERROR_CONSTRUCTORS)) {
    t.equal(new Ctor('x').code, key)
  }
})

t.test('every error code is documented in the docs/errors.md tables', async (t) => {
  for (const code of [...Object.keys(ERROR_CONSTRUCTORS), ...TOOL_ERROR_CODES]) {
    t.ok(readme.includes(`\`${code}\``), `${code} is in docs/errors.md`)
  }
})

t.test('every APP_ERR_ code docs/errors.md names exists in src/base/errors.ts (a tool error\'s is APP_ERR_TOOL)', async (t) => {
  const named = new Set([...readme.matchAll(/`(APP_ERR_[A-Z_]+)`/g)].map(m => m[1]))
  t.ok(named.size > 10)
  for (const code of named) t.ok(code === 'APP_ERR_TOOL' || Object.hasOwn(ERROR_CONSTRUCTORS, code), `${code} is an error constructor`)
})

t.test('every tool error code in the docs/errors.md table exists in src/base/errors.ts', async (t) => {
  const documented = [...readme.matchAll(/^\| `([A-Z_]+)` \|/gm)].map(m => m[1]).filter(c => !c.startsWith('APP_ERR_'))
  t.ok(documented.length > 10)
  for (const code of documented) t.ok((TOOL_ERROR_CODES as readonly string[]).includes(code), `${code} is a TOOL_ERROR_CODES entry`)
})

t.test('toolError renders ERROR <CODE>: <message>. Hint: <next call>', async (t) => {
  const err = toolError('PATH_NOT_FOUND', "No file at 'a.ts'", 'call find_files with patterns ["**/a.ts"]')

  t.equal(err.message, 'ERROR PATH_NOT_FOUND: No file at \'a.ts\'. Hint: call find_files with patterns ["**/a.ts"].')
  t.equal(err.code, 'APP_ERR_TOOL')
  t.equal(err.toolCode, 'PATH_NOT_FOUND')
})

t.test('toolError keeps the error behind it as its cause (for the log), never in the text', async (t) => {
  const behind = Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })

  const err = toolError('SEARCH_FAILED', 'the search stopped', 'call again', behind)

  t.equal(err.cause, behind)
  t.equal(err.message, 'ERROR SEARCH_FAILED: the search stopped. Hint: call again.')
  t.notOk(Object.hasOwn(toolError('SEARCH_FAILED', 'x'), 'cause'), 'none given, none set')
})
