import t from 'tap'
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ESLint } from 'eslint'
import type { CommandIo } from '../../src/bin/run.js'
import { testHost } from '../helpers/in-process.js'
import { stdoutLines } from '../helpers/rpc.js'
import { untracked } from '../helpers/spawn-stdio.js'

// CONTRIBUTING.md's "Add a tool" section is the single source of its example: this test applies its steps,
// as written, to a copy of the project and runs the checks `npm test` would fail on — the build's
// tsc, lint of the touched files, `workspace-mcp check` (conventions, token allowance, docs) and the
// golden manifest — then calls the new tool through the built stdio command. The full suite is not run here.
// npm and its scripts run as processes (they are what is tested); lint, check and the calls run the copy's
// built modules in this process.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const COPIED = ['src', 'scripts', 'docs', 'test/golden', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'eslint.config.js']
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

/** Applies a CONTRIBUTING.md edit of src/tool-list.ts: its imports after the last import, its entries at the end of `tools`. */
function register (index: string, block: string): string {
  const imports = block.split('\n').filter(line => line.startsWith('import '))
  const entries = /\[([\s\S]*)\]/.exec(block)?.[1].split('\n').map(line => line.trim()).filter(line => /^\w+,?$/.test(line)).map(line => line.replace(/,$/, '')) ?? []
  if (imports.length === 0 || entries.length === 0) throw new Error(`the CONTRIBUTING.md src/tool-list.ts block shows no import or no entry:\n${block}`)
  const lines = index.split('\n')
  const lastImport = lines.findLastIndex(line => line.startsWith('import '))
  lines.splice(lastImport + 1, 0, ...imports)
  const edited = lines.join('\n')
  const list = /(export const tools: AnyTool\[\] = \[[\s\S]*?)(\n\])/.exec(edited)
  if (list === null) throw new Error('src/tool-list.ts has no `export const tools: AnyTool[] = [ … ]` to append to')
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

/** The copy's built modules (tsc's output, dist/src), loaded in this process. */
async function built<T> (copy: string, module: string): Promise<T> {
  return await import(pathToFileURL(join(copy, 'dist/src', module)).href) as T
}

/** Calls tools through the copy's built stdio command, in this process; the text of each result. */
async function callTools (copy: string, root: string, calls: Array<{ name: string, arguments: Record<string, unknown> }>): Promise<Array<{ text: string, isError: boolean }>> {
  const { serveStdioCommand } = await built<typeof import('../../src/bin/stdio.js')>(copy, 'bin/stdio.js')
  const run = testHost()
  const started = serveStdioCommand(['--root', root, '--code-index', 'off'], { codeCache: 'none' }, run.host)
  const { response } = stdoutLines(run.output, () => run.logs())
  const send = (message: unknown): void => { run.input.write(JSON.stringify(message) + '\n') }
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'contributing', version: '1' } } })
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  calls.forEach((params, i) => send({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params }))
  const answers = await Promise.all(calls.map(async (_, i) => await response(i + 1) as { result?: { content: Array<{ text: string }>, isError?: boolean } }))
  run.input.end()
  await started
  await run.exited
  return answers.map(answer => {
    if (answer.result === undefined) throw new Error(`no tools/call result: ${JSON.stringify(answer)}`)
    return { text: answer.result.content[0].text, isError: answer.result.isError === true }
  })
}

t.test('the CONTRIBUTING.md "Add a tool" steps, applied as written, pass the checks and publish the tool', { timeout: 240_000 }, async (t) => {
  const blocks = sectionBlocks(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'), '## Add a tool')
  const copy = mkdtempSync(join(tmpdir(), 'wmcp-add-a-tool-'))
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  for (const path of COPIED) cpSync(join(ROOT, path), join(copy, path), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'))

  // Steps 1 and 2: a block for a new file is written as is; the block for index.ts is applied to it.
  const touched: string[] = []
  const created: Block[] = []
  for (const block of blocks.filter(b => b.lang === 'ts')) {
    if (block.file === undefined) throw new Error(`a ts block names no file in its first line:\n${block.code}`)
    const target = join(copy, block.file)
    if (block.file === 'src/tool-list.ts') writeFileSync(target, register(readFileSync(target, 'utf8'), block.code))
    else if (existsSync(target)) throw new Error(`${block.file} already exists: CONTRIBUTING.md must add a new file`)
    else {
      writeFileSync(target, block.code)
      created.push(block)
    }
    touched.push(block.file)
  }
  if (!t.equal(created.length, 1, 'one new tool file')) return
  t.equal(dirname(created[0].file ?? ''), 'src/tools')
  t.ok(touched.includes('src/tool-list.ts'), 'the tool is registered')
  const tool = created[0]
  const name = /^\s+name: '(\w+)'/m.exec(tool.code)?.[1] ?? ''
  t.ok(name !== '', `the tool's name (${name})`)

  // The copy, edited, was never built: npm pack builds it (prepack) and packs the bin; the steps below build no more.
  const packed = run(copy, 'npm', ['pack', '--json', '--pack-destination', copy])
  if (!t.equal(packed.status, 0, `npm pack: ${output(packed)}`)) return
  t.match(packed.stderr, /building \(no build yet\)/, 'prepack built the unbuilt checkout')
  t.ok((JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.some(file => file.path === 'dist/bin/cli.js'), 'the tarball has its bin')

  // Step 3: the shell block, in order; `npm test` becomes the checks it would run on this tool.
  const commands = blocks.filter(b => b.lang === 'sh').flatMap(b => b.code.split('\n')).map(line => line.trim()).filter(Boolean)
  t.same(commands.at(-1), 'npm test', 'the steps end with npm test')
  for (const command of commands.slice(0, -1)) {
    t.match(command, /^npm run [\w:-]+$/, 'every step before npm test is an npm script')
    const r = run(copy, 'npm', command.split(' ').slice(1))
    if (!t.equal(r.status, 0, `${command}: ${output(r)}`)) return
  }

  // ESLint with the copy's configuration, and the copy's built command line, in this process.
  const eslint = new ESLint({ cwd: copy })
  const linted = await eslint.lintFiles(touched)
  t.equal(linted.reduce((sum, r) => sum + r.errorCount + r.warningCount, 0), 0, `eslint ${touched.join(' ')}: ${await (await eslint.loadFormatter('stylish')).format(linted)}`)

  const { run: runBuilt } = await built<typeof import('../../src/bin/run.js')>(copy, 'bin/run.js')
  const check = { stdout: '', stderr: '' }
  const io: CommandIo = { stdout: { write: (text) => { check.stdout += text } }, stderr: { write: (text) => { check.stderr += text } } }
  await runBuilt(['check', '--root', copy], io)
  if (!t.equal(io.exitCode ?? 0, 0, `workspace-mcp check: ${check.stdout}${check.stderr}`)) return
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
  const [result, capped] = await callTools(copy, workspace, [{ name, arguments: { path: 'notes.txt' } }, { name, arguments: { path: 'notes.txt', max_lines: 2 } }])
  t.equal(result.isError, false, result.text)
  t.match(result.text, /notes\.txt: 3 lines/)
  t.match(capped.text, /notes\.txt: over 2 lines/, 'a snake_case argument reaches run')
})
