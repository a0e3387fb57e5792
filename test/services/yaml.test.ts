import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { parse } from 'yaml'
import { parseYaml, yamlParser, yamlTable } from '../../src/services/yaml.js'

// The build-time parse table: a shipped document is answered from it, anything else from the library,
// and both answers are the same.

const DOCS = [
  'tools:\n  list_directory:\n    description: Lists a folder.\n    examples:\n      - comment: top\n        arguments: { path: "." }\n',
  'name: spec\narguments:\n  - name: feature\n    required: true\n',
  '# only a comment\n'
]

t.test('a table hit needs no parser; a miss parses with yaml; both answer what yaml.parse does', async (t) => {
  const file = path.join(t.testdir(), 'table.json')
  fs.writeFileSync(file, yamlTable(DOCS))
  const fromTable = yamlParser(file)
  for (const text of DOCS) t.strictSame(fromTable(text), parse(text), JSON.stringify(text.slice(0, 20)))
  t.strictSame(fromTable('a: [1, 2]'), { a: [1, 2] }, 'a text not in the table is parsed')
  t.throws(() => fromTable('a: [1'), 'a syntax error is thrown, as parse throws it')

  // A planted entry shows where a hit comes from (the library would say 1).
  fs.writeFileSync(file, JSON.stringify({ 'a: 1\n': '{"a":"from the table"}' }))
  t.strictSame(yamlParser(file)('a: 1\n'), { a: 'from the table' })
  t.strictSame(yamlParser(file)('a: 1'), { a: 1 }, 'the key is the exact text')
})

t.test('every hit is a fresh value: a caller that changes its copy changes nothing for the next one', async (t) => {
  const file = path.join(t.testdir(), 'table.json')
  fs.writeFileSync(file, yamlTable(DOCS))
  const fromTable = yamlParser(file)
  const first = fromTable(DOCS[1]) as { arguments: Array<{ name: string }> }
  first.arguments[0].name = 'changed'
  t.equal((fromTable(DOCS[1]) as typeof first).arguments[0].name, 'feature')
})

t.test('a value JSON cannot carry exactly stays out of the table and is still parsed right', async (t) => {
  const special = 'limit: .inf\nratio: .nan\n'
  const table = JSON.parse(yamlTable([special, DOCS[1]])) as Record<string, string>
  t.strictSame(Object.keys(table), [DOCS[1]])
  const file = path.join(t.testdir(), 'table.json')
  fs.writeFileSync(file, JSON.stringify(table))
  t.strictSame(yamlParser(file)(special), { limit: Infinity, ratio: NaN })
  t.throws(() => yamlTable(['a: [1']), 'a shipped document with a syntax error fails the build')
})

t.test('a missing or corrupt table is no table', async (t) => {
  const dir = t.testdir({ 'corrupt.json': '{"a: 1\n": ' })
  t.strictSame(yamlParser(path.join(dir, 'none.json'))('a: 1\n'), { a: 1 })
  t.strictSame(yamlParser(path.join(dir, 'corrupt.json'))('a: 1\n'), { a: 1 })
  // Run from src/ (no build next to it), the module's own table is absent and every text is parsed.
  t.strictSame(parseYaml('a: 1\n'), { a: 1 })
})
