import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { spawn, spawnSync } from 'node:child_process'
import { spawnHttp } from '../helpers/spawn-http.js'
import { childEnv, COVERED_CLI } from '../helpers/spawn-stdio.js'

const ESC = '\u001b'
const JSON_LINE = /^\{"level":30,.*"msg":"workspace-mcp listening at http:\/\/127\.0\.0\.1:\d+\/mcp"\}$/m
// pino-pretty's line, with or without colour codes around the level and the message.
const PRETTY_LINE = new RegExp(String.raw`^\[\d\d:\d\d:\d\d\.\d{3}\] (${ESC}\[\d+m)?INFO(${ESC}\[\d+m)?: (${ESC}\[\d+m)?workspace-mcp listening at http://127\.0\.0\.1:\d+/mcp`, 'm')

t.test('logs to a pipe are JSON lines by default (a collector parses them)', async (t) => {
  const server = await spawnHttp(t)
  await new Promise(resolve => setTimeout(resolve, 200))
  t.match(server.output(), JSON_LINE)
})

t.test('--log-format pretty prints pino-pretty lines, without colour on a pipe', async (t) => {
  const server = await spawnHttp(t, ['--log-format', 'pretty'])
  await new Promise(resolve => setTimeout(resolve, 200))
  t.match(server.output(), PRETTY_LINE)
  t.notMatch(server.output(), /"level":/, 'no JSON')
  t.notOk(server.output().includes(ESC), 'no escape codes into a pipe')
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
