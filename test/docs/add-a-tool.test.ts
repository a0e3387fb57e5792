import t from 'tap'
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { untracked } from '../helpers/spawn-stdio.js'

// CONTRIBUTING.md's "Add a tool" section is the single source of its example: this test applies its steps,
// as written, to a copy of the project and runs the checks `npm test` would fail on — the build's
// tsc, lint of the touched files, `workspace-mcp check` (conventions, token allowance, docs) and the
// golden manifest — then calls the new tool through the built bin. The full suite is not run here.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const COPIED = ['src', 'plugins', 'scripts', 'docs', 'test/golden', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'eslint.config.js']
const GOLDEN = 'test/golden/tools-list.json'
// The copy's processes are not this project's code under test: tap's variables and hooks would only slow
// them down (its spawn hook adds them back to any env, hence `untracked` too).
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(TAP|_TAPJS|NODE_OPTIONS$|NODE_V8_COVERAGE$)/.test(key)))

interface Block { lang: string, file?: string, code: string }

/** The fenced code blocks of one CONTRIBUTING.md section, each with the file its first-line comment names. */
function sectionBlocks (readme: string, heading: string): Block[] {
  const start = readme.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`CONTRIBUTING.md has no "${heading}" section`)
  const end = readme.indexOf('\n## ', start + heading.length + 2)
  const section = readme.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({
    lang,
    file: /^\/\/ (\S+\.ts)\n/.exec(code)?.[1],
    code
  }))
}

/** Applies a CONTRIBUTING.md edit of src/tools/index.ts: its imports after the last import, its entries at the end of `tools`. */
function register (index: string, block: string): string {
  const imports = block.split('\n').filter(line => line.startsWith('import '))
  const entries = /\[([\s\S]*)\]/.exec(block)?.[1].split('\n').map(line => line.trim()).filter(line => /^\w+,?$/.test(line)).map(line => line.replace(/,$/, '')) ?? []
  if (imports.length === 0 || entries.length === 0) throw new Error(`the CONTRIBUTING.md src/tools/index.ts block shows no import or no entry:\n${block}`)
  const lines = index.split('\n')
  const lastImport = lines.findLastIndex(line => line.startsWith('import '))
  lines.splice(lastImport + 1, 0, ...imports)
  const edited = lines.join('\n')
  const list = /(export const tools: AnyTool\[\] = \[[\s\S]*?)(\n\])/.exec(edited)
  if (list === null) throw new Error('src/tools/index.ts has no `export const tools: AnyTool[] = [ … ]` to append to')
  const appended = `${list[1]},\n${entries.map(e => `  ${e}`).join(',\n')}${list[2]}`
  return edited.replace(list[0], appended)
}

/** The properties a CONTRIBUTING.md `Type.Object({ … })` declares, split into published and injected, and which are required. */
function declaredInput (code: string): { published: string[], required: string[], injected: string[] } {
  const lines = code.split('\n').map(line => /^ {4}(\w+): (Type\.Optional\(|Type\.|Inject\()/.exec(line)).filter(m => m !== null)
  return {
    published: lines.filter(m => m[2] !== 'Inject(').map(m => m[1]),
    required: lines.filter(m => m[2] === 'Type.').map(m => m[1]),
    injected: lines.filter(m => m[2] === 'Inject(').map(m => m[1])
  }
}

const run = (cwd: string, command: string, args: string[]): SpawnSyncReturns<string> => {
  const untrackedCommand = untracked(command, args)
  return spawnSync(untrackedCommand.command, untrackedCommand.args, { cwd, env, encoding: 'utf8', timeout: 120_000 })
}
const output = (r: SpawnSyncReturns<string>): string => `${r.stdout}\n${r.stderr}${r.error === undefined ? '' : `\n${r.error.message}`}`

/** Calls one tool through the built bin over stdio; the text of its result. */
function callTool (cli: string, root: string, name: string, args: Record<string, unknown>): { text: string, isError: boolean } {
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'readme', version: '1' } }
  const input = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: init },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }
  ].map(m => JSON.stringify(m)).join('\n') + '\n'
  const stdio = untracked(process.execPath, [cli, 'stdio', '--root', root])
  const r = spawnSync(stdio.command, stdio.args, { env, input, encoding: 'utf8', timeout: 30_000 })
  const answer = r.stdout.split('\n').filter(Boolean).map(line => JSON.parse(line)).find(m => m.id === 2)
  if (answer?.result === undefined) throw new Error(`no tools/call result: ${output(r)}`)
  return { text: answer.result.content[0].text, isError: answer.result.isError === true }
}

t.test('the CONTRIBUTING.md "Add a tool" steps, applied as written, pass the checks and publish the tool', { timeout: 240_000 }, async (t) => {
  const blocks = sectionBlocks(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'), '## Add a tool')
  const copy = mkdtempSync(join(tmpdir(), 'wmcp-add-a-tool-'))
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  for (const path of COPIED) cpSync(join(ROOT, path), join(copy, path), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'))

  // Before the steps, the copy is a checkout that was never built: npm pack builds it (prepack) and packs the bin.
  const packed = run(copy, 'npm', ['pack', '--json', '--pack-destination', copy])
  if (!t.equal(packed.status, 0, `npm pack: ${output(packed)}`)) return
  t.match(packed.stderr, /building \(no build yet\)/, 'prepack built the unbuilt checkout')
  t.ok((JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.some(file => file.path === 'dist/bin/cli.js'), 'the tarball has its bin')

  // Steps 1 and 2: a block for a new file is written as is; the block for index.ts is applied to it.
  const touched: string[] = []
  const created: Block[] = []
  for (const block of blocks.filter(b => b.lang === 'ts')) {
    if (block.file === undefined) throw new Error(`a ts block names no file in its first line:\n${block.code}`)
    const target = join(copy, block.file)
    if (block.file === 'src/tools/index.ts') writeFileSync(target, register(readFileSync(target, 'utf8'), block.code))
    else if (existsSync(target)) throw new Error(`${block.file} already exists: CONTRIBUTING.md must add a new file`)
    else {
      writeFileSync(target, block.code)
      created.push(block)
    }
    touched.push(block.file)
  }
  if (!t.equal(created.length, 1, 'one new tool file')) return
  t.equal(dirname(created[0].file ?? ''), 'src/tools')
  t.ok(touched.includes('src/tools/index.ts'), 'the tool is registered')
  const tool = created[0]
  const name = /^\s+name: '(\w+)'/m.exec(tool.code)?.[1] ?? ''
  t.ok(name !== '', `the tool's name (${name})`)

  // Step 3: the shell block, in order; `npm test` becomes the checks it would run on this tool.
  const commands = blocks.filter(b => b.lang === 'sh').flatMap(b => b.code.split('\n')).map(line => line.trim()).filter(Boolean)
  t.same(commands.at(-1), 'npm test', 'the steps end with npm test')
  for (const command of commands.slice(0, -1)) {
    t.match(command, /^npm run [\w:-]+$/, 'every step before npm test is an npm script')
    const r = run(copy, 'npm', command.split(' ').slice(1))
    if (!t.equal(r.status, 0, `${command}: ${output(r)}`)) return
  }

  const lint = run(copy, process.execPath, [join(copy, 'node_modules/eslint/bin/eslint.js'), ...touched])
  t.equal(lint.status, 0, `eslint ${touched.join(' ')}: ${output(lint)}`)

  const cli = join(copy, 'dist/bin/cli.js')
  const check = run(copy, process.execPath, [cli, 'check'])
  if (!t.equal(check.status, 0, `workspace-mcp check: ${output(check)}`)) return
  t.match(check.stdout, new RegExp(`^ {2}${name}\\s+SchemaOnly\\s+\\d+ tokens$`, 'm'), 'check measures the new tool')

  // The golden manifest: the committed one plus the new tool at the end, in the same text format.
  const committed = JSON.parse(readFileSync(join(ROOT, GOLDEN), 'utf8'))
  const regenerated = readFileSync(join(copy, GOLDEN), 'utf8')
  const published = JSON.parse(regenerated).tools.at(-1)
  t.equal(published.name, name, 'the new tool is last in tools/list')
  t.equal(regenerated, JSON.stringify({ ...committed, tools: [...committed.tools, published] }, null, 2) + '\n', 'the other tools are unchanged')

  const input = declaredInput(tool.code)
  t.match(published.inputSchema, { type: 'object', additionalProperties: false })
  t.same(Object.keys(published.inputSchema.properties), input.published, 'the published parameters, in order')
  t.same(published.inputSchema.required ?? [], input.required)
  for (const service of input.injected) t.notOk(service in published.inputSchema.properties, `injected ${service} is not published`)
  for (const [param, schema] of Object.entries(published.inputSchema.properties as Record<string, Record<string, unknown>>)) {
    t.ok(typeof schema.type === 'string' && typeof schema.description === 'string', `${param} has a type and a description`)
  }

  // It runs: CONTRIBUTING.md's count_lines counts the lines of a workspace file.
  const workspace = mkdtempSync(join(tmpdir(), 'wmcp-add-a-tool-root-'))
  t.teardown(() => rmSync(workspace, { recursive: true, force: true }))
  writeFileSync(join(workspace, 'notes.txt'), 'one\ntwo\nthree\n')
  const result = callTool(cli, workspace, name, { path: 'notes.txt' })
  t.equal(result.isError, false, result.text)
  t.match(result.text, /notes\.txt: 3 lines/)
  const capped = callTool(cli, workspace, name, { path: 'notes.txt', max_lines: 2 })
  t.match(capped.text, /notes\.txt: over 2 lines/, 'a snake_case argument reaches run')
})
