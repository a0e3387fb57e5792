import t from 'tap'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.js'
import { createLogger, logDestination } from '../../src/base/logger.js'

// The format follows where logs go: a pipe or file gets JSON lines, a terminal pino-pretty's coloured lines. The
// destinations here are files in this process; a spawned serve at a pseudo-terminal is test/bin/http.test.ts's
// smoke test.

const ESC = '\u001b'
// pino-pretty's line, with or without colour codes around the level and the message.
const prettyLine = (msg: string): RegExp => new RegExp(String.raw`^\[\d\d:\d\d:\d\d\.\d{3}\] (${ESC}\[\d+m)?INFO(${ESC}\[\d+m)?: (${ESC}\[\d+m)?${msg}`, 'm')

/** What one info line logs into a file (not a terminal) through logDestination(format). */
async function loggedToFile (dir: string, format: string): Promise<string> {
  const file = join(dir, `${format}.log`)
  const fd = openSync(file, 'w')
  const log = createLogger({ logLevel: 'info' }, await logDestination(fd, format, true))
  log.info({ root: '/w' }, 'ready to serve')
  log.flush()
  closeSync(fd)
  return readFileSync(file, 'utf8')
}

t.test('auto and json: a destination that is not a terminal gets JSON lines (a collector parses them)', async (t) => {
  const dir = t.testdir({})
  for (const format of ['auto', 'json']) {
    const text = await loggedToFile(dir, format)
    t.match(JSON.parse(text), { level: 30, name: 'workspace-mcp', root: '/w', msg: 'ready to serve' }, format)
  }
})

t.test('pretty: pino-pretty lines, without colour when the destination is not a terminal', async (t) => {
  const text = await loggedToFile(t.testdir({}), 'pretty')
  t.match(text, prettyLine('ready to serve'))
  t.notMatch(text, /"level":/, 'no JSON')
  t.notOk(text.includes(ESC), 'no escape codes into a file')
})

t.test('an unknown log format is bad usage naming the choices', async (t) => {
  const run = await runCli(['serve', '--log-format', 'xml'])
  t.equal(run.status, 2)
  t.match(run.stderr, /--log-format \/ WORKSPACE_MCP_LOG_FORMAT: expected one of "auto", "json", "pretty"/)
})
