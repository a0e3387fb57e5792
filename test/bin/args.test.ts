import t from 'tap'
import { ConfigSchema, configFlagName } from '../../src/config.js'
import { commandHelp, HTTP_ONLY_KEYS, type CommandName } from '../../src/bin/help.js'
import { splitArgs } from '../../src/bin/command-runtime.js'

// The offline commands' argument handling and help text, in-process: the spawned-bin tests
// (test/bin/tools.test.ts, guide.test.ts) check the same through the shipped bundle.

t.test('splitArgs takes a command\'s own flags out and passes the rest on, in order', async (t) => {
  const split = splitArgs(['--root', '/w', '--json', '--tool', 'a', '--tool=b', '--log-level=debug', '--category', 'search'], ['json'], ['tool', 'category'])

  t.same(split.own, { json: ['true'], tool: ['a', 'b'], category: ['search'] })
  t.same(split.rest, ['--root', '/w', '--log-level=debug'])
})

t.test('a value flag keeps an inline value that holds "=" and may be empty of spaces only', async (t) => {
  t.same(splitArgs(['--tool=a=b'], [], ['tool']).own, { tool: ['a=b'] })
  t.same(splitArgs(['--tool', '-x'], [], ['tool']).own, { tool: ['-x'] }, 'a value may start with one dash')
})

t.test('a boolean flag given a value is not the command\'s: it goes on to the config parser', async (t) => {
  t.same(splitArgs(['--json=yes'], ['json'], []), { own: {}, rest: ['--json=yes'] })
})

t.test('a value flag without a value is bad usage naming the flag', async (t) => {
  for (const argv of [['--tool'], ['--tool='], ['--tool', '--json'], ['--tool', '']]) {
    t.throws(() => splitArgs(argv, ['json'], ['tool']), { code: 'APP_ERR_CONFIG_INVALID', message: /--tool needs a value/ }, JSON.stringify(argv))
  }
})

t.test('every command\'s help names each of its flags with its variable, range, choices and default', async (t) => {
  const commands: CommandName[] = ['serve', 'stdio', 'tools', 'guide', 'check']
  for (const command of commands) {
    const help = commandHelp(command)
    t.match(help, new RegExp(`^Usage: workspace-mcp ${command} \\[options\\]\n`), command)
    t.match(help, /\nExit codes: 0 [^\n]*2 bad usage or configuration\.$/, `${command}: exit codes last`)
    t.match(help, /--root\s+WORKSPACE_MCP_ROOT\n/, `${command}: --root`)
  }
  const serve = commandHelp('serve')
  for (const key of Object.keys(ConfigSchema.properties)) t.match(serve, `  ${configFlagName(key)} `, `serve lists ${key}`)
  t.match(serve, /--body-limit[^\n]*\n[^\n]*\(1024–104857600; default 4194304\)/, 'a range and a default')
  t.match(serve, /--mode[^\n]*\n[^\n]*one of stateful, stateless/, 'choices')
  t.match(serve, /\nExit codes: 0 success, 1 failure, 2 bad usage or configuration\.$/, 'the default exit codes')
  t.match(commandHelp('tools'), /--json {2,}Print the tools\/list manifest/, 'a command\'s own flags')
  t.match(commandHelp('guide'), /--tool NAME[\s\S]*--category NAME[\s\S]*--no-examples/)
  t.match(commandHelp('check'), /Exit codes: 0 every check passed, 1 violations found/)
  t.notMatch(commandHelp('tools'), /--port/, 'offline commands list only the flags they read')
})

t.test('stdio --help lists every flag stdio reads (all but the HTTP server\'s), and none of the HTTP server\'s', async (t) => {
  const help = commandHelp('stdio')
  const keys = Object.keys(ConfigSchema.properties)
  t.ok([...HTTP_ONLY_KEYS].every(key => keys.includes(key)), 'the HTTP-only keys are config keys')
  for (const key of keys) {
    const listed = help.includes(`  ${configFlagName(key)} `)
    t.equal(listed, !HTTP_ONLY_KEYS.has(key), `${configFlagName(key)} ${HTTP_ONLY_KEYS.has(key) ? 'is the HTTP server\'s' : 'is listed'}`)
  }
  for (const flag of ['--roots', '--client-roots', '--code-index', '--state-dir', '--embeddings-url']) t.match(help, `  ${flag} `, flag)
})
