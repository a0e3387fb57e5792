import t from 'tap'
import { ConfigSchema, configFlagName } from '../../src/base/config.js'
import { commandHelp } from '../../src/bin/help.js'
import { COMMAND_KEYS, HTTP_ONLY_KEYS, OWN_FLAGS, commandFlags, type CommandName } from '../../src/bin/command-flags.js'
import { splitArgs } from '../../src/bin/command-runtime.js'
import { runCli } from '../helpers/cli.js'

// The offline commands' argument handling and help text, in-process: the spawned-bin tests
// (test/bin/tools.test.ts, guide.test.ts) check the same through the shipped bundle.

const COMMANDS: CommandName[] = ['serve', 'stdio', 'index', 'tools', 'guide', 'check']

t.test('splitArgs takes a command\'s own flags out and passes the rest on, in order', async (t) => {
  const split = splitArgs(['--root', '/w', '--json', '--tool', 'a', '--tool=b', '--log-level=debug', '--category', 'search'], { booleans: ['json'], values: ['tool', 'category'] })

  t.same(split.own, { json: ['true'], tool: ['a', 'b'], category: ['search'] })
  t.same(split.rest, ['--root', '/w', '--log-level=debug'])
})

t.test('a value flag keeps an inline value that holds "=" and may be empty of spaces only', async (t) => {
  t.same(splitArgs(['--tool=a=b'], { booleans: [], values: ['tool'] }).own, { tool: ['a=b'] })
  t.same(splitArgs(['--tool', '-x'], { booleans: [], values: ['tool'] }).own, { tool: ['-x'] }, 'a value may start with one dash')
})

t.test('a boolean flag given a value is not the command\'s: it goes on to the config parser', async (t) => {
  t.same(splitArgs(['--json=yes'], { booleans: ['json'], values: [] }), { own: {}, rest: ['--json=yes'] })
})

t.test('a value flag without a value is bad usage naming the flag', async (t) => {
  for (const argv of [['--tool'], ['--tool='], ['--tool', '--json'], ['--tool', '']]) {
    t.throws(() => splitArgs(argv, { booleans: ['json'], values: ['tool'] }), { code: 'APP_ERR_CONFIG_INVALID', message: /--tool needs a value/ }, JSON.stringify(argv))
  }
})

t.test('every command\'s help names each of its flags with its variable, range, choices and default', async (t) => {
  for (const command of COMMANDS) {
    const help = commandHelp(command)
    t.match(help, new RegExp(`^Usage: workspace-mcp ${command} \\[options\\]\n`), command)
    t.match(help, /\nExit codes: 0 [^\n]*2 bad usage or configuration[^\n]*\.$/, `${command}: exit codes last`)
    t.match(help, /--root\s+WORKSPACE_MCP_ROOT\n/, `${command}: --root`)
  }
  const serve = commandHelp('serve')
  for (const key of Object.keys(ConfigSchema.properties)) t.match(serve, `  ${configFlagName(key)} `, `serve lists ${key}`)
  t.match(serve, /--body-limit[^\n]*\n[^\n]*\(1024–104857600; default 4194304\)/, 'a range and a default')
  t.match(serve, /--mode[^\n]*\n[^\n]*one of stateful, stateless/, 'choices')
  t.match(serve, /\nExit codes: 0 success, 1 failure, 2 bad usage or configuration\.$/, 'the default exit codes')
  t.match(commandHelp('tools'), /--json {2,}Print the tools array, the very bytes of tools\/list's `tools`/, 'a command\'s own flags')
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

t.test('every command\'s help lists exactly the config flags it takes; any other config flag is refused, naming who reads it', async (t) => {
  t.strictSame(Object.keys(COMMAND_KEYS).sort(), [...COMMANDS].sort(), 'every command has its keys')
  for (const command of COMMANDS) {
    for (const flag of [...OWN_FLAGS[command].booleans, ...OWN_FLAGS[command].values]) t.match(commandHelp(command), `\n  --${flag} `, `${command} --help lists its own --${flag}`)
  }
  const keys = Object.keys(ConfigSchema.properties)
  const sample: Record<string, string[]> = { boolean: [], string: ['x'] }
  for (const command of COMMANDS) {
    const help = commandHelp(command)
    for (const key of keys) {
      const flag = configFlagName(key)
      const argv = [flag, ...(((ConfigSchema.properties as Record<string, { type?: string }>)[key].type === 'boolean') ? sample.boolean : sample.string)]
      const listed = help.includes(`\n  ${flag} `)
      if (COMMAND_KEYS[command].includes(key)) {
        t.ok(listed, `${command} --help lists ${flag}`)
        t.doesNotThrow(() => commandFlags(command, argv), `${command} takes ${flag}`)
      } else {
        t.notOk(listed, `${command} --help does not list ${flag}`)
        t.throws(() => commandFlags(command, argv), {
          code: 'APP_ERR_CONFIG_INVALID',
          message: new RegExp(`: ${flag} does nothing for \`workspace-mcp ${command}\` \\(read by: serve[,)].*\`workspace-mcp ${command} --help\` lists the flags it reads$`)
        }, `${command} refuses ${flag}`)
      }
    }
  }
})

t.test('the flags that change which tools exist are taken by every command that prints about them', async (t) => {
  for (const command of ['tools', 'guide', 'check'] as const) {
    for (const flag of ['--code-index', '--ripgrep-path', '--embeddings-url', '--embeddings-model', '--docs-file', '--roots']) t.match(commandHelp(command), `\n  ${flag} `, `${command}: ${flag}`)
  }
  t.throws(() => commandFlags('tools', ['--port', '4000', '--allow-hard-links']),
    { message: /: --allow-hard-links does nothing for `workspace-mcp tools` \(read by: serve, stdio, index\); --port does nothing for `workspace-mcp tools` \(read by: serve\); `workspace-mcp tools --help`/ }, 'each ignored flag named once')
})

t.test('a misspelt flag names the command\'s closest flag; one too far from any is named alone', async (t) => {
  t.throws(() => commandFlags('serve', ['--prot', '3000']), { code: 'APP_ERR_CONFIG_INVALID', message: /Unknown option '--prot' \(did you mean --port\?\)$/ })
  t.throws(() => commandFlags('stdio', ['--exclude-tool=git_log']), { message: /Unknown option '--exclude-tool' \(did you mean --exclude-tools\?\)$/ })
  t.throws(() => commandFlags('tools', ['--jsn']), { message: /\(did you mean --json\?\)$/ }, 'a command\'s own flag too')
  t.throws(() => commandFlags('tools', ['--prot']), { message: /Unknown option '--prot' \(did you mean --root\?\)$/ }, 'only a flag the command reads: tools takes no --port')
  t.throws(() => commandFlags('serve', ['--zzzzzzzzzz']), { message: /Unknown option '--zzzzzzzzzz'$/ })
  t.throws(() => commandFlags('serve', ['stray']), { message: /Unexpected argument 'stray'/ }, 'another parse error is passed on as it is')
})

t.test('--tools and --exclude-tools: read by the commands that serve or print the tool list; check holds every tool', async (t) => {
  for (const command of ['serve', 'stdio', 'tools', 'guide'] as const) {
    for (const flag of ['--tools', '--exclude-tools']) t.match(commandHelp(command), `\n  ${flag} `, `${command}: ${flag}`)
  }
  t.notMatch(commandHelp('check'), /\n {2}--tools /)
  t.notMatch(commandHelp('index'), /\n {2}--exclude-tools /)
})

t.test('the chosen tools over the command line: listed, the rest said to be left out; a typo is exit 2 with its fix', async (t) => {
  const listed = await runCli(['tools', '--tools', 'read_files,list_directory,git_log', '--exclude-tools', 'git_log'])
  const json = await runCli(['tools', '--json', '--exclude-tools', 'get_tool_usage_guide'])
  const typo = await runCli(['tools', '--tools', 'read_file'])
  const env = await runCli(['guide', '--exclude-tools', 'list_directory,find_files,search_regex'])
  const command = await runCli(['serv'])

  t.equal(listed.status, 0, listed.stderr)
  t.match(listed.stdout, /^list_directory +navigation +List Directory\nread_files +read +Read Files\n/)
  t.match(listed.stdout, /\ngit_log \(not listed: left out by --tools \/ --exclude-tools\)\n/)
  t.notMatch(json.stdout, /get_tool_usage_guide/)
  t.equal(typo.status, 2)
  t.match(typo.stderr, /--tools \/ WORKSPACE_MCP_TOOLS: "read_file" is not a tool \(did you mean read_files\?\)/)
  t.equal(env.status, 0)
  t.notMatch(env.stdout, /\b(list_directory|find_files|search_regex)\b/, 'the guide names none of them')
  t.equal(command.status, 2)
  t.match(command.stderr, /^Unknown command 'serv' \(did you mean 'serve'\?\)\./)
})
