// The stdio floor: a bare newline-delimited JSON-RPC loop that parses each line and answers
// initialize, ping and tools/call with fixed results (the same bytes ours returns for `echo`).
// With --coalesce it also writes every answer of one tick in one write, as ours does (src/mcp/stdio.ts):
// the floor for that technique, so the report shows what coalescing buys apart from everything else.
const coalesce = process.argv.includes('--coalesce')
let corked = false
const uncork = () => { corked = false; process.stdout.uncork() }
const INIT = '{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"bare","version":"1.0.0"}}'
const ECHO = '{"content":[{"type":"text","text":"hello"}]}'

let partial = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk) => {
  let text = partial + chunk
  let index = text.indexOf('\n')
  while (index !== -1) {
    const msg = JSON.parse(text.slice(0, index))
    if (msg.id !== undefined) {
      const result = msg.method === 'initialize' ? INIT : msg.method === 'tools/call' ? ECHO : '{}'
      if (coalesce && !corked) { corked = true; process.stdout.cork(); process.nextTick(uncork) }
      process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}\n`)
    }
    text = text.slice(index + 1)
    index = text.indexOf('\n')
  }
  partial = text
})
