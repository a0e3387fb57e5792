import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { untracked } from '../helpers/spawn-stdio.js'

// The package as users get it: `npm pack` holds the bin, the docs and nothing else, and a global
// install of that tarball into a fresh prefix runs `workspace-mcp stdio` and `serve` with only the
// runtime dependencies it declares (everything else is bundled: a missing one fails here, not for users).

const execFileP = promisify(execFile)
// npm and the installed bin are not this project's covered code: outside tap's process tracking.
const run = async (command: string, args: string[], options: { cwd: string }) => {
  const untrackedCommand = untracked(command, args)
  return await execFileP(untrackedCommand.command, untrackedCommand.args, options)
}
const repo = fileURLToPath(new URL('../..', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pack-test', version: '1' } }

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-pack-')))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

t.test('npm pack holds the bin, its source maps, the stdio bundle\'s code cache, the shipped YAML\'s parse table, the docs, the README and the licence — nothing else', async (t) => {
  // npm test built it; that prepack builds an unbuilt checkout is test/docs/add-a-tool.test.ts's.
  const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: repo })
  const [packed] = JSON.parse(stdout) as Array<{ filename: string, files: Array<{ path: string }> }>
  const files = packed.files.map(f => f.path)

  const allowed = /^(package\.json|README\.md|LICENSE|dist\/bin\/([\w-]+\.js(\.map)?|stdio\.cjs(\.map|\.cache)?|yaml-table\.json)|docs\/[\w/.-]+\.(ya?ml|md))$/
  t.strictSame(files.filter(f => !allowed.test(f)), [], 'no stray file')
  for (const needed of ['dist/bin/cli.js', 'dist/bin/stdio.cjs', 'dist/bin/stdio.cjs.cache', 'dist/bin/yaml-table.json', 'docs/tools.yaml', 'LICENSE', 'README.md']) t.ok(files.includes(needed), needed)
  t.ok(fs.existsSync(path.join(dir, packed.filename)))
})

t.test('npm install -g of the tarball gives a workspace-mcp that serves stdio and HTTP', { timeout: 120_000 }, async (t) => {
  const tarball = fs.readdirSync(dir).find(f => f.endsWith('.tgz'))
  if (tarball === undefined) return t.fail('no tarball (the pack test failed)')
  const prefix = path.join(dir, 'prefix')
  await run(npm, ['install', '-g', '--prefix', prefix, path.join(dir, tarball), '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir })
  const bin = path.join(prefix, 'bin', 'workspace-mcp')
  const ws = path.join(dir, 'ws')
  fs.mkdirSync(ws)
  fs.writeFileSync(path.join(ws, 'notes.md'), '# Notes\n\nhello from the tarball\n')
  fs.writeFileSync(path.join(ws, 'tool.py'), 'def from_the_tarball():\n    pass\n')

  const lines = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_regex', arguments: { pattern: 'tarball' } } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_tool_usage_guide', arguments: { tool_names: ['read_files'] } } },
    { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'read_files', arguments: { files: [{ path: 'notes.md' }] } } },
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_symbols', arguments: { paths: ['tool.py'] } } }
  ]
  const stdioCommand = untracked(bin, ['stdio', '--root', ws, '--log-level', 'silent'])
  const stdio = spawn(stdioCommand.command, stdioCommand.args, { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => { stdio.kill('SIGKILL') })
  let out = ''
  stdio.stdout.setEncoding('utf8')
  stdio.stdout.on('data', (chunk: string) => { out += chunk })
  stdio.stdin.end(lines.map(l => JSON.stringify(l)).join('\n') + '\n')
  await new Promise(resolve => stdio.once('exit', resolve))
  const answers = new Map(out.trim().split('\n').map(l => JSON.parse(l)).map((m: { id: number }) => [m.id, JSON.stringify(m)]))
  t.match(answers.get(1), /"serverInfo":\{"name":"workspace-mcp"/)
  t.match(answers.get(2), /notes\.md/, 'ripgrep came with the install')
  t.match(answers.get(3), /# Tool usage guide/, 'the docs overlay ships and parses (yaml)')
  t.match(answers.get(4), /hello from the tarball/)
  t.match(answers.get(5), /1-2 function from_the_tarball: def from_the_tarball\(\):/, 'the parser and its grammars came with the install')

  const httpCommand = untracked(bin, ['serve', '--root', ws, '--port', '0'])
  const http = spawn(httpCommand.command, httpCommand.args, { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { http.kill('SIGKILL') })
  const url = await new Promise<string>((resolve, reject) => {
    let log = ''
    const guard = setTimeout(() => reject(new Error(`no URL: ${log}`)), 15_000)
    http.stdout.on('data', (chunk: Buffer) => {
      log += chunk.toString()
      const m = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(log)
      if (m !== null) { clearTimeout(guard); resolve(m[0]) }
    })
  })
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT })
  })
  t.equal(res.status, 200)
  t.match(await res.text(), /"protocolVersion":"2025-11-25"/)
  t.ok(res.headers.get('mcp-session-id'), 'stateful by default')
})
