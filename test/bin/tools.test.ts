import t from 'tap'
import { readFileSync } from 'node:fs'
import { runCli as run } from '../helpers/cli.js'

// The command line in-process (src/bin/run.ts, as src/cli.ts runs it). That `tools --json` prints the bytes a
// spawned bin serves as tools/list is test/bin/stdio.test.ts's.

t.test('each path of the dispatch: exit codes and streams', async (t) => {
  const cases: Array<{ args: string[], status: number, stdout: RegExp }> = [
    { args: [], status: 2, stdout: /^$/ },
    { args: ['--help'], status: 0, stdout: /^Usage: workspace-mcp <command>/ },
    { args: ['--version'], status: 0, stdout: /^workspace-mcp \d+\.\d+\.\d+/ },
    { args: ['toString'], status: 2, stdout: /^$/ },
    { args: ['tools', '--help'], status: 0, stdout: /^Usage: workspace-mcp tools/ },
    { args: ['tools'], status: 0, stdout: /^get_tool_usage_guide\s+guide/m },
    { args: ['tools', '--json'], status: 0, stdout: /^\[\{"name":/ }
  ]
  for (const c of cases) {
    const out = await run(c.args)
    t.equal(out.status, c.status, `${c.args.join(' ')}: ${out.stderr}`)
    t.match(out.stdout, c.stdout, c.args.join(' '))
  }
})

t.test('`tools` prints one line per tool and nothing else on stdout; a tool not listed here says what it needs', async (t) => {
  const out = await run(['tools'])
  const off = await run(['tools', '--code-index', 'off'])
  t.match(off.stdout, /^find_symbol \(not listed: needs the code index \(--code-index on; SQLite and tree-sitter\)\)$/m)
  t.match(out.stdout, /^search_semantic \(not listed: needs an embeddings provider \(--embeddings-url and --embeddings-model\)\)$/m)

  t.equal(out.status, 0)
  t.match(out.stdout, /^get_tool_usage_guide\s+guide\s+Tool Usage Guide$/m)
  t.notMatch(out.stdout, /"level"/, 'no log lines on stdout')
})

t.test('`--help` on every command prints usage and documented exit codes, exit 0', async (t) => {
  for (const command of ['tools', 'guide', 'check']) {
    const out = await run([command, '--help'])

    t.equal(out.status, 0, command)
    t.match(out.stdout, new RegExp(`^Usage: workspace-mcp ${command}`), command)
    t.match(out.stdout, /Exit codes: 0 .*, 1 .*, 2 bad usage or configuration/, command)
  }
})

t.test('an unknown flag is bad usage: exit 2, nothing on stdout', async (t) => {
  const out = await run(['tools', '--bogus'])

  t.equal(out.status, 2)
  t.equal(out.stdout, '')
  t.match(out.stderr, /Unknown option '--bogus'/)
})

t.test('top level: --help and --version print to stdout with exit 0; no command is bad usage on stderr, exit 2', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string, version: string }
  for (const flag of ['--help', '-h', 'help']) {
    const out = await run([flag])
    t.equal(out.status, 0, flag)
    t.match(out.stdout, /^Usage: workspace-mcp <command>/, `${flag}: usage on stdout`)
    t.equal(out.stderr, '', flag)
  }
  for (const flag of ['--version', '-v', 'version']) {
    const out = await run([flag])
    t.equal(out.status, 0, flag)
    t.equal(out.stdout, `${pkg.name} ${pkg.version}\n`, `${flag}: name and version`)
  }
  const bare = await run([])
  t.equal(bare.status, 2)
  t.equal(bare.stdout, '')
  t.match(bare.stderr, /^Usage: workspace-mcp <command>/)
  // Names an object inherits are typos too, not commands: `toString` once crashed with "main is not a function".
  for (const typo of ['serv', 'toString', '__proto__', 'constructor', 'hasOwnProperty']) {
    const out = await run([typo])
    t.equal(out.status, 2, `${typo}: bad usage`)
    t.equal(out.stdout, '', typo)
    const fix = typo === 'serv' ? " \\(did you mean 'serve'\\?\\)" : ''
    t.match(out.stderr, new RegExp(`^Unknown command '${typo}'${fix}\\.\n\nUsage: workspace-mcp <command>`), `${typo}: named${fix === '' ? '' : ' with its fix'}, then the usage`)
  }
})

t.test('an invalid choice names every valid one; --help shows each flag\'s range and choices', async (t) => {
  const mode = await run(['serve', '--mode', 'weird'])
  t.equal(mode.status, 2)
  t.match(mode.stderr, /--mode \/ WORKSPACE_MCP_MODE: expected one of "stateful", "stateless", received "weird"/)
  t.notMatch(mode.stderr, /union/)
  const help = (await run(['serve', '--help'])).stdout
  t.match(help, /--body-limit[^\n]*\n[^\n]*\(1024–104857600; default 4194304\)/)
  t.match(help, /--log-level[^\n]*\n[^\n]*one of fatal, error, warn, info, debug, trace, silent/)
})
