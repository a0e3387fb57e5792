// The stdio floor: a bare newline-delimited JSON-RPC loop that parses each line and answers
// initialize, ping and tools/call with fixed results (the same bytes ours returns for `echo`).
// With --coalesce it also writes every answer of one tick in one write, as ours does (src/mcp/stdio.ts):
// the floor for that technique, so the report shows what coalescing buys apart from everything else.
// With --modern it answers as a 2026-07-28 server does: server/discover, and the echo result with the
// resultType and identity ours adds (the bytes the protocol itself adds to each answer).
import { readFileSync } from 'node:fs'

const coalesce = process.argv.includes('--coalesce')
const modern = process.argv.includes('--modern')
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
let corked = false
const uncork = () => { corked = false; process.stdout.uncork() }
const INIT = '{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"bare","version":"1.0.0"}}'
const IDENTITY = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"workspace-mcp","version":"${version}"}}`
const ECHO = modern ? `{"content":[{"type":"text","text":"hello"}],"resultType":"complete",${IDENTITY}}` : '{"content":[{"type":"text","text":"hello"}]}'
const DISCOVER = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete",${IDENTITY}}`

let partial = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk) => {
  let text = partial + chunk
  let index = text.indexOf('\n')
  while (index !== -1) {
    const msg = JSON.parse(text.slice(0, index))
    if (msg.id !== undefined) {
      const result = msg.method === 'initialize' ? INIT : msg.method === 'server/discover' ? DISCOVER : msg.method === 'tools/call' ? ECHO : '{}'
      if (coalesce && !corked) { corked = true; process.stdout.cork(); process.nextTick(uncork) }
      process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}\n`)
    }
    text = text.slice(index + 1)
    index = text.indexOf('\n')
  }
  partial = text
})
