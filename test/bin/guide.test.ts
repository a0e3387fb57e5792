import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli as run } from '../helpers/cli.js'

// `workspace-mcp guide`, in-process as src/cli.ts runs it (test/bin/tools.test.ts spawns the shipped bundle).

t.test('`guide` prints the whole guide as Markdown on stdout', async (t) => {
  const out = await run(['guide'])

  t.equal(out.status, 0, out.stderr)
  t.match(out.stdout, /^# Tool usage guide\n\nGenerated \S+ · (\d+) of \1 tools · filter: none\n/)
  t.match(out.stdout, /### get_tool_usage_guide — Tool Usage Guide/)
})

t.test('`guide --tool NAME` prints only that tool; unknown names warn on stderr and exit 1', async (t) => {
  const one = await run(['guide', '--tool', 'get_tool_usage_guide', '--no-examples'])
  const typo = await run(['guide', '--tool=get_tool_usage_guide', '--tool', 'nonexistent'])

  t.equal(one.status, 0)
  t.match(one.stdout, /filter: tool_names=get_tool_usage_guide include_examples=false/)
  t.notMatch(one.stdout, /\*\*Examples\*\*/)
  t.equal(typo.status, 1)
  t.match(typo.stdout, /### get_tool_usage_guide/, 'the rest is still printed')
  t.match(typo.stderr, /Tool 'nonexistent' not found\. Available: /)
})

t.test('`guide --category C` prints that category only; the last --category wins', async (t) => {
  const out = await run(['guide', '--category', 'navigation', '--category', 'search', '--no-examples'])

  t.equal(out.status, 0, out.stderr)
  t.match(out.stdout, /filter: category=search include_examples=false/)
  t.match(out.stdout, /## Search \(5 tools\)\n\n### search_regex/)
  t.notMatch(out.stdout, /### (list_directory|read_files|find_files)/)
})

t.test('`guide --docs-file` with a corrupt overlay still prints the registry text, with a warning on stderr', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wmcp-guide-bin-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'tools.yaml'), 'tools: [unclosed\n')

  const out = await run(['guide', '--docs-file', join(dir, 'tools.yaml'), '--tool', 'get_tool_usage_guide'])

  t.equal(out.status, 0)
  t.match(out.stdout, /\[Description pending\]/)
  t.match(out.stderr, /overlay is corrupt/)
})

t.test('`guide --tool` without a name is bad usage (exit 2)', async (t) => {
  const out = await run(['guide', '--tool'])

  t.equal(out.status, 2)
  t.equal(out.stdout, '')
})

t.test('`guide --category history` prints the history tools; a category that does not exist is bad usage naming them all', async (t) => {
  const history = await run(['guide', '--category', 'history', '--no-examples'])
  t.equal(history.status, 0, history.stderr)
  t.match(history.stdout, /### git_log/)
  const bogus = await run(['guide', '--category', 'bogus'])
  t.equal(bogus.status, 2)
  t.equal(bogus.stdout, '')
  t.match(bogus.stderr, /--category: "bogus" is not a category \(one of navigation, search, read, history, guide\)/)
  t.match((await run(['guide', '--help'])).stdout, /--category NAME {13}Only one category: navigation, search, read, history, guide/)
})
