import t from 'tap'
import { toolError, type NextStep } from '../../src/errors.js'
import { withNextStep } from '../../src/tools/next-step.js'
import { tools } from '../../src/tools/index.js'

// Services name the next step by code; the tool layer writes the sentence, which names a tool that exists.

const EVERY_STEP: Record<NextStep, true> = {
  'describe-path': true,
  'list-now': true,
  'list-layout': true,
  'list-from-root': true,
  'list-links': true,
  'inside-only': true,
  'list-or-find': true,
  'list-the-directory': true,
  'list-commits': true,
  'name-a-commit': true,
  'read-or-grep': true,
  'describe-file': true,
  'describe-damaged': true,
  'describe-damaged-or-encrypted': true,
  'rank-by-words': true,
  'grep-for-definitions': true,
  'list-and-read': true,
  'read-without-history': true
}
const TOOL_NAMES = new Set(tools.map(tool => tool.name))

t.test('every step becomes one hint sentence naming a shipped tool, with or without the path and field', async (t) => {
  for (const step of Object.keys(EVERY_STEP) as NextStep[]) {
    for (const facts of [{ step }, { step, path: 'src/a.ts', field: 'paths[1]' }]) {
      const err = withNextStep(toolError('PATH_NOT_FOUND', 'No file', facts))
      const hint = /^ERROR PATH_NOT_FOUND: No file\. Hint: (.+)$/.exec(err.message)?.[1]
      t.ok(hint?.endsWith('.'), `${step}: one sentence`)
      const named = (hint ?? '').match(/[a-z]+_[a-z_]+/g) ?? []
      t.ok(named.length > 0 && named.every(name => TOOL_NAMES.has(name)), `${step}: names only shipped tools (${named.join(', ')})`)
      t.equal(err.next, undefined, `${step}: the code is spent`)
      t.equal(withNextStep(err).message, err.message, `${step}: applied once`)
    }
  }
  t.match(withNextStep(toolError('PATH_NOT_FOUND', 'No file', { step: 'list-the-directory' })).message, /list_directory path="\."/, 'no path: the root')
  t.match(withNextStep(toolError('PATH_NOT_FOUND', 'No file', { step: 'list-from-root', field: 'paths[1]' })).message, /e\.g\. paths\[1\]="src"/, 'the field that carried it')
  t.match(withNextStep(toolError('PATH_NOT_FOUND', 'No file', { step: 'describe-path', path: 'x.ts' })).message, /get_file_info path="x\.ts"/)
})

t.test('an error without a next step, or with a hint already written, is left as it is', async (t) => {
  const written = toolError('INVALID_ARGUMENT', 'bad', 'call list_directory')
  t.equal(withNextStep(written).message, 'ERROR INVALID_ARGUMENT: bad. Hint: call list_directory.')
})
