import t from 'tap'
import fs from 'node:fs'
import { stdioInProcess } from '../helpers/in-process.js'

// Issue 40: a read_files argument nested 50,000 arrays deep answered `Tool 'read_files' failed (ref …)` after a
// RangeError in the error formatter. Replayed through the stdio transport (in this process), as a client sends it.
// The class (any tool, any field, any hostile shape) is the property test in test/mcp/validate.test.ts.

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'issue-40', version: '1' } }

t.test('a read_files argument nested 50,000 arrays deep is INVALID_ARGUMENT naming the field, and nothing fails in the server', async (t) => {
  const root = t.testdir({ 'a.txt': 'hello\n' })
  const stdio = await stdioInProcess(t, ['--root', fs.realpathSync(root), '--log-level', 'info', '--code-index', 'off'])
  stdio.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT })
  await stdio.response(1)
  stdio.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  const deep = `${'['.repeat(50_000)}"a.txt"${']'.repeat(50_000)}`
  const deepObject = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`

  stdio.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_files","arguments":{"files":${deep}}}}\n`)
  stdio.write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_file_info","arguments":{"paths":["a.txt"],"x":${deepObject}}}}\n`)
  stdio.write(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_files","arguments":{"files":[{"path":"a.txt","start_line":${deepObject}}]}}}\n`)
  const answers = await Promise.all([2, 3, 4].map(async id => await stdio.response(id) as { result: { isError: boolean, content: Array<{ text: string }> } }))

  const [files, unknown, nested] = answers.map(a => a.result.content[0].text)
  t.match(files, /^ERROR INVALID_ARGUMENT: files: must not nest arrays or objects more than 64 levels deep, received \[+\.\.\. Hint: /)
  t.match(unknown, /^ERROR UNKNOWN_ARGUMENT: x: unknown argument; valid arguments: paths\. /)
  t.match(nested, /^ERROR INVALID_ARGUMENT: files: must not nest .* received \[\{"path":"a\.txt","start_line":\{"a":\{"a":/)
  for (const a of answers) t.ok(a.result.isError && a.result.content[0].text.length < 400, 'an error result, bounded')
  t.notMatch(stdio.stderr(), /tool failed|RangeError/, 'no masked failure, no stack overflow')
})
