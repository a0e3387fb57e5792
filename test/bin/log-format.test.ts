import t from 'tap'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { runCli } from '../helpers/cli.js'
import { childEnv, COVERED_CLI } from '../helpers/spawn-stdio.js'
import { createLogger, logDestination } from '../../src/logger.js'

// The format follows where logs go: a pipe or file gets JSON lines, a terminal pino-pretty's coloured lines. That a
// spawned serve logs JSON lines into its pipe is test/bin/http.test.ts's smoke test; here the destinations are
// files in this process, and one spawned server has a pseudo-terminal.

const ESC = '\u001b'
// pino-pretty's line, with or without colour codes around the level and the message.
const prettyLine = (msg: string): RegExp => new RegExp(String.raw`^\[\d\d:\d\d:\d\d\.\d{3}\] (${ESC}\[\d+m)?INFO(${ESC}\[\d+m)?: (${ESC}\[\d+m)?${msg}`, 'm')
const PRETTY_LINE = prettyLine(String.raw`workspace-mcp listening at http://127\.0\.0\.1:\d+/mcp`)

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

const script = spawnSync('script', ['--version'], { encoding: 'utf8' })
t.test('auto: a terminal gets coloured pretty lines', { skip: script.status === 0 ? false : 'needs `script` (util-linux) for a pseudo-terminal' }, async (t) => {
  // `script` gives the server a pseudo-terminal as stdout. Once its first line is there, SIGINT (found
  // by its own command line: the root is this test's) ends it the way a person at that terminal would —
  // on a loaded machine a start can take seconds, so no fixed wait. tsc's output, for coverage: the only
  // run of src/logger.ts's terminal branch.
  const root = t.testdir({ 'a.txt': 'x\n' })
  const command = `${process.execPath} ${COVERED_CLI} serve --port 0 --root ${root}`
  const child = spawn('script', ['-qec', `exec ${command}`, '/dev/null'], { env: childEnv(COVERED_CLI), stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let stdout = ''
  const closed = new Promise(resolve => child.once('close', resolve))
  await new Promise<void>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`no listening line within 30 s: ${JSON.stringify(stdout)}`)), 30_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (!PRETTY_LINE.test(stdout)) return
      clearTimeout(guard)
      resolve()
    })
  })
  spawnSync('pkill', ['-INT', '-f', `^${command}$`])
  await closed
  t.match(stdout, PRETTY_LINE)
  t.ok(stdout.includes(`${ESC}[32mINFO`), 'coloured')
  t.notMatch(stdout, /"level":/)
})

t.test('an unknown log format is bad usage naming the choices', async (t) => {
  const run = await runCli(['serve', '--log-format', 'xml'])
  t.equal(run.status, 2)
  t.match(run.stderr, /logFormat \(--log-format \/ WORKSPACE_MCP_LOG_FORMAT\): expected one of "auto", "json", "pretty"/)
})
