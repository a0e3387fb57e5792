import t from 'tap'
import type { TSchema } from '@sinclair/typebox'
import { readFileSync } from 'node:fs'
import { ConfigSchema, allowedValues, configFlagName, configuredRoots, loadConfig, parseConfigFlags } from '../src/base/config.js'

t.test('defaults: root is the current directory, loopback bind on 3000, stateful', async (t) => {
  const config = loadConfig({}, {}, '/tmp')

  t.match(config, { root: '/tmp', host: '127.0.0.1', port: 3000, mode: 'stateful' })
  t.ok(Object.isFrozen(config))
})

t.test('flags win over environment variables, which are coerced', async (t) => {
  const config = loadConfig(parseConfigFlags(['--port', '4000', '--mode', 'stateless']), { WORKSPACE_MCP_PORT: '5000', WORKSPACE_MCP_TOOL_TIMEOUT_MS: '2000', WORKSPACE_MCP_ALLOWED_HOSTS: 'a.example, b.example' }, '/tmp')

  t.equal(config.port, 4000)
  t.equal(config.mode, 'stateless')
  t.equal(config.toolTimeoutMs, 2000)
  t.strictSame(config.allowedHosts, ['a.example', 'b.example'])
})

t.test('a bad value stops startup with a message naming the flag and the variable', async (t) => {
  t.throws(() => loadConfig({}, { WORKSPACE_MCP_PORT: '99999' }), { code: 'APP_ERR_CONFIG_INVALID', message: /--port \/ WORKSPACE_MCP_PORT.*99999/ })
  t.throws(() => loadConfig({ mode: 'sometimes' }, {}), { code: 'APP_ERR_CONFIG_INVALID', message: /mode/ })
  t.throws(() => parseConfigFlags(['--colour', 'red']), { code: 'APP_ERR_CONFIG_INVALID', message: /colour/ })
})

t.test('allowBroadRoot: off by default, a bare --allow-broad-root flag, or a boolean variable', async (t) => {
  t.equal(loadConfig({}, {}, '/tmp').allowBroadRoot, false)
  t.equal(loadConfig(parseConfigFlags(['--allow-broad-root']), {}, '/tmp').allowBroadRoot, true)
  t.equal(loadConfig(parseConfigFlags(['--allow-broad-root', '--root', '/srv']), {}, '/tmp').root, '/srv', 'the next flag is not taken as its value')
  for (const [value, expected] of [['true', true], ['1', true], ['false', false], ['0', false], ['', false]] as const) {
    t.equal(loadConfig({}, { WORKSPACE_MCP_ALLOW_BROAD_ROOT: value }, '/tmp').allowBroadRoot, expected, `WORKSPACE_MCP_ALLOW_BROAD_ROOT=${value}`)
  }
  t.throws(() => loadConfig({}, { WORKSPACE_MCP_ALLOW_BROAD_ROOT: 'yes' }), { code: 'APP_ERR_CONFIG_INVALID', message: /--allow-broad-root \/ WORKSPACE_MCP_ALLOW_BROAD_ROOT/ })
  t.throws(() => parseConfigFlags(['--allow-broad-root=yes']), { code: 'APP_ERR_CONFIG_INVALID', message: /allow-broad-root/ })
})

t.test('the docs/configuration.md table states every flag\'s range and every choice', async (t) => {
  const readme = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')
  for (const [key, schema] of Object.entries(ConfigSchema.properties) as Array<[string, { minimum?: number, maximum?: number }]>) {
    const row = readme.split('\n').find(line => line.startsWith(`| \`${configFlagName(key)}\` |`))
    if (row === undefined) {
      t.fail(`${configFlagName(key)} has no row in the docs/configuration.md table`)
      continue
    }
    if (schema.minimum !== undefined) t.match(row, `${schema.minimum}–${schema.maximum ?? ''}`, `${key}: its range`)
    for (const value of allowedValues(schema as TSchema) ?? []) t.match(row, `\`${value}\``, `${key}: the choice ${value}`)
  }
})

t.test('every setting\'s description names other settings by their flags, never by their config keys (as --help and the docs show them)', async (t) => {
  const keys = Object.keys(ConfigSchema.properties).filter(key => /[A-Z]/.test(key))
  for (const [key, schema] of Object.entries(ConfigSchema.properties) as Array<[string, { description: string }]>) {
    const named = keys.filter(other => new RegExp(`(?<![\\w-])${other}(?![\\w-])`).test(schema.description))
    t.same(named, [], `${configFlagName(key)}: ${named.map(other => `${other} → ${configFlagName(other)}`).join(', ')}`)
  }
})

t.test('an invalid choice lists the valid ones instead of "Expected union value"', async (t) => {
  t.throws(() => loadConfig({ logLevel: 'loud' }, {}), { message: /--log-level \/ WORKSPACE_MCP_LOG_LEVEL: expected one of "fatal", "error", "warn", "info", "debug", "trace", "silent", received "loud"/ })
})

t.test('every config key is described, and a bounded one is bounded on both sides (the --help text relies on it)', async (t) => {
  for (const [key, schema] of Object.entries(ConfigSchema.properties) as Array<[string, { description?: unknown, minimum?: number, maximum?: number }]>) {
    t.type(schema.description, 'string', `${key} has a description`)
    t.equal(schema.minimum === undefined, schema.maximum === undefined, `${key}: minimum and maximum come together`)
  }
})

t.test('several roots: --root again, WORKSPACE_MCP_ROOTS, names given or taken from the folder and made unique', async (t) => {
  const repeated = loadConfig(parseConfigFlags(['--root', 'app', '--root', 'docs=./manual', '--root', '/srv/a,b', '--roots', 'x/src']), {}, '/w')
  t.equal(repeated.root, '/w/app')
  t.same(configuredRoots(repeated), [
    { name: 'app', path: '/w/app' }, { name: 'docs', path: '/w/manual' }, { name: 'a-b', path: '/srv/a,b' }, { name: 'src', path: '/w/x/src' }
  ], 'each repeated --root is one root, a comma and all; --roots adds after them')
  t.same(configuredRoots(loadConfig({}, { WORKSPACE_MCP_ROOTS: 'one/src, two/src,three/.hidden' }, '/w')).map(r => r.name), ['src', 'src-2', 'hidden'], 'a list alone: its first is the root')
  t.same(configuredRoots(loadConfig({}, { WORKSPACE_MCP_ROOT: '/p/src', WORKSPACE_MCP_ROOTS: 'src=/q' }, '/w')), [{ name: 'src-2', path: '/p/src' }, { name: 'src', path: '/q' }], 'a given name is kept; a default steps aside')
  t.same(configuredRoots(loadConfig({}, {}, '/')), [{ name: 'root', path: '/' }], 'a folder without a usable name')
  t.same(configuredRoots(loadConfig({}, {}, '/w/./a=b')), [{ name: 'a-b', path: '/w/a=b' }], 'a path with "=" and a "/" before it is a path')
  t.same(configuredRoots({ root: '/w/only' }), [{ name: 'only', path: '/w/only' }], 'a config built by hand')
  t.same(loadConfig({ root: '/w/a' }, {}).roots, ['a=/w/a'])
  t.throws(() => loadConfig(parseConfigFlags(['--root', 'x=/a', '--root', 'x=/b']), {}), { code: 'APP_ERR_CONFIG_INVALID', message: /--root \/ WORKSPACE_MCP_ROOTS: the name "x" is given to two roots/ })
  t.throws(() => loadConfig(parseConfigFlags(['--root', '/a', '--root', 'y=/a']), {}), { code: 'APP_ERR_CONFIG_INVALID', message: /\/a is given twice/ })
})
