// The stdio floor: a bare newline-delimited JSON-RPC loop that parses each line and answers
// initialize, ping and tools/call with fixed results (the same bytes ours returns for `echo`).
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
      process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}\n`)
    }
    text = text.slice(index + 1)
    index = text.indexOf('\n')
  }
  partial = text
})
