import t from 'tap'
import { toolError, type NextStep, type ToolError } from '../../src/base/errors.js'
import type { CatalogEntry } from '../../src/services/catalog.js'
import { excludedError, withNextStep } from '../../src/tool-api/next-step.js'
import { tools } from '../../src/tool-list.js'

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

t.test('a hint names only served tools: a left-out tool\'s clause goes, the other alternatives stay', async (t) => {
  const hint = (step: NextStep, unserved: string[]): string => withNextStep(toolError('PATH_NOT_FOUND', 'No file', { step }), new Set(unserved)).message

  t.equal(hint('list-or-find', ['list_directory']), 'ERROR PATH_NOT_FOUND: No file. Hint: find_files finds it by name.')
  t.equal(hint('list-or-find', ['find_files']), 'ERROR PATH_NOT_FOUND: No file. Hint: list_directory shows what exists.')
  t.equal(hint('list-or-find', ['find_files', 'list_directory']), 'ERROR PATH_NOT_FOUND: No file.', 'no served alternative: no hint')
  t.equal(hint('list-from-root', ['list_directory']), 'ERROR PATH_NOT_FOUND: No file. Hint: use a path relative to the workspace root, e.g. path="src".', 'a parenthesis naming it goes')
  for (const step of Object.keys(EVERY_STEP) as NextStep[]) {
    for (const name of TOOL_NAMES) t.notMatch(hint(step, [name]), new RegExp(`\\b${name}\\b`), `${step} without ${name}`)
  }
})

t.test('a hint written as text loses what it says of a tool that is not served; others are left as they are', async (t) => {
  const written = (): ToolError => toolError('NOT_A_DIRECTORY', 'path: "a" is a file', 'read it with read_files files=[{"path":"a"}], or get_file_info paths=["a"]')

  t.equal(withNextStep(written(), new Set(['read_files'])).message, 'ERROR NOT_A_DIRECTORY: path: "a" is a file. Hint: get_file_info paths=["a"].')
  t.equal(withNextStep(written(), new Set(['read_files', 'get_file_info'])).message, 'ERROR NOT_A_DIRECTORY: path: "a" is a file.')
  t.equal(withNextStep(written(), new Set(['git_log'])).message, written().message, 'naming no unserved tool: unchanged')
})

t.test('a call to a left-out tool names the served tools of its category, else where the list is', async (t) => {
  const entry = (name: string, category: string) => ({ name, category }) as CatalogEntry

  t.equal(excludedError('git_log', 'history', [entry('git_show', 'history'), entry('git_diff', 'history')]).message,
    'ERROR TOOL_EXCLUDED: git_log is not offered by this server: its operator left it out (--tools / --exclude-tools). Hint: the history tools it serves: git_show, git_diff.')
  t.match(excludedError('git_log', 'history', [entry('get_workspace_info', 'guide')]).message, /Hint: get_workspace_info lists the tools it serves\.$/)
  t.match(excludedError('git_log', 'history', [entry('read_files', 'read')]), { toolCode: 'TOOL_EXCLUDED', message: /Hint: tools\/list lists the tools it serves\.$/ })
})
