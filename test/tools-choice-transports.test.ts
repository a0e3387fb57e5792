import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { httpInProcess, stdioInProcess } from './helpers/in-process.js'

// --tools / --exclude-tools over both transports and both protocol eras, in this process: exactly the chosen tools
// are listed and callable, a left-out tool answers TOOL_EXCLUDED naming what is served, and the instructions name
// only served tools.

const root = mkdtempSync(join(tmpdir(), 'wmcp-choice-'))
mkdirSync(join(root, 'src'))
writeFileSync(join(root, 'README.md'), '# Choice\n\nHello.\n')
writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 1\n')

const CHOICE = ['--root', root, '--tools', 'list_directory,read_files,find_files,get_workspace_info', '--exclude-tools', 'find_files']
const SERVED = ['list_directory', 'read_files', 'get_workspace_info']
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const modern = (id: number, method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } })
const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }

type Answer = Record<string, any>

/** One conversation over a transport, initialized (2025): its instructions, then 2025 and 2026 requests. */
interface Link {
  instructions: string
  legacy: (id: number, method: string, params?: Record<string, unknown>) => Promise<Answer>
  modern: (id: number, method: string, params?: Record<string, unknown>) => Promise<Answer>
}

async function overStdio (t: Test): Promise<Link> {
  // A stdio connection speaks the era its client speaks first: one for each.
  const legacyProc = await stdioInProcess(t, CHOICE)
  const modernProc = await stdioInProcess(t, CHOICE)
  const ask = async (proc: typeof legacyProc, message: Answer): Promise<Answer> => {
    proc.send(message)
    return await proc.response(message.id)
  }
  const init = await ask(legacyProc, { jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT })
  return {
    instructions: init.result.instructions,
    legacy: async (id, method, params = {}) => await ask(legacyProc, { jsonrpc: '2.0', id, method, params }),
    modern: async (id, method, params = {}) => await ask(modernProc, modern(id, method, params))
  }
}

/** A JSON answer, or the one SSE event a 2025 answer may come as. */
const parse = (text: string): Answer => JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text) as RegExpExecArray)[1])

async function overHttp (t: Test): Promise<Link> {
  const { url } = await httpInProcess(t, CHOICE)
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT }) })
  const session = init.headers.get('mcp-session-id') as string
  const instructions = parse(await init.text()).result.instructions
  const post = async (body: Answer, extra: Record<string, string>): Promise<Answer> => {
    const res = await fetch(url, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) })
    return parse(await res.text())
  }
  return {
    instructions,
    legacy: async (id, method, params = {}) => await post({ jsonrpc: '2.0', id, method, params }, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
    modern: async (id, method, params = {}) => {
      const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {}
      return await post(modern(id, method, params), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...name })
    }
  }
}

for (const [transport, connect] of [['stdio', overStdio], ['HTTP', overHttp]] as const) {
  t.test(`${transport}: exactly the chosen tools, in both eras; a left-out tool answers TOOL_EXCLUDED naming the served ones`, async (t) => {
    const link = await connect(t)
    const instructions = link.instructions

    const legacyList = await link.legacy(2, 'tools/list')
    const modernList = await link.modern(3, 'tools/list')
    const legacyCall = await link.legacy(4, 'tools/call', { name: 'find_files', arguments: { patterns: ['*.ts'] } })
    const modernCall = await link.modern(5, 'tools/call', { name: 'search_regex', arguments: { pattern: 'a' } })
    const served = await link.modern(6, 'tools/call', { name: 'read_files', arguments: { files: [{ path: 'README.md' }] } })
    const unknown = await link.legacy(7, 'tools/call', { name: 'read_filez', arguments: {} })

    t.same(legacyList.result.tools.map((tool: Answer) => tool.name), SERVED, '2025 tools/list')
    t.same(modernList.result.tools.map((tool: Answer) => tool.name), SERVED, '2026 tools/list')
    t.equal(modernList.result.resultType, 'complete', 'answered in the 2026-07-28 era')
    t.notOk('resultType' in legacyList.result, 'answered in the 2025 era')
    t.match(legacyCall.result, { isError: true, content: [{ text: /^ERROR TOOL_EXCLUDED: find_files is not offered by this server: its operator left it out \(--tools \/ --exclude-tools\)\. Hint: the navigation tools it serves: list_directory\.$/ }] })
    t.match(modernCall.result, { isError: true, content: [{ text: /^ERROR TOOL_EXCLUDED: search_regex .* Hint: get_workspace_info lists the tools it serves\.$/ }] })
    t.match(served.result, { content: [{ text: /Hello\./ }] }, 'a chosen tool answers')
    t.match(unknown.error, { code: -32602, message: /did you mean read_files\?/ }, 'a typo is still an unknown tool, fixed to a served one')
    for (const name of ['find_files', 'search_regex', 'get_tool_usage_guide', 'search_code', 'git_log']) t.notMatch(instructions, name, `the instructions do not name ${name}`)
    t.match(instructions, /Details and examples for every tool: the resource workspace:\/\/help\./, 'the help resource stays when the guide tool is left out')
  })
}

t.test('HTTP and stdio serve the same tools/list bytes for the same choice', async (t) => {
  const http = await overHttp(t)
  const stdio = await overStdio(t)

  const a = await http.modern(1, 'tools/list')
  const b = await stdio.modern(1, 'tools/list')

  t.same(a, b)
})
