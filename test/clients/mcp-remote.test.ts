import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import t from 'tap'
import { httpInProcess } from '../helpers/in-process.js'
import { stdoutLines } from '../helpers/rpc.js'
import { untracked } from '../helpers/spawn-stdio.js'

// mcp-remote, the stdio bridge clients without HTTP support use, against a token-protected server: with the
// README's --header it connects and lists the tools. It is a process of its own, as clients run it.

const PROXY = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js')

t.test('mcp-remote --header "Authorization: Bearer …" reaches a static-token server', async (t) => {
  const token = 'remote-token-0123456789'
  const root = t.testdir({ 'a.txt': 'hello\n' })
  const http = await httpInProcess(t, ['--root', root, '--code-index', 'off'], { WORKSPACE_MCP_AUTH_TOKENS: `me:${createHash('sha256').update(token).digest('hex')}` })
  const { command, args } = untracked(process.execPath, [PROXY, http.url, '--header', `Authorization: Bearer ${token}`])
  const child = spawn(command, args, { env: { ...process.env, MCP_REMOTE_CONFIG_DIR: t.testdir({}) }, stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  t.teardown(() => { child.kill('SIGTERM') })
  const { response } = stdoutLines(child.stdout, () => `mcp-remote: ${stderr}`)
  const send = (message: unknown): void => { child.stdin.write(JSON.stringify(message) + '\n') }

  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'remote-test', version: '1' } } })
  t.match(await response(1), { result: { serverInfo: { name: 'workspace-mcp' } } })
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
  const listed = await response(2) as { result?: { tools?: Array<{ name: string }> } }
  t.ok(listed.result?.tools?.some(tool => tool.name === 'read_files'), 'the tools, through the bridge')
})
