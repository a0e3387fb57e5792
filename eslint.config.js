import neostandard from 'neostandard'

// Layers, bottom up: errors/config/logger → services → guide (and the tool-authoring API in
// tools/define-*) → tools → mcp → plugins, app, runtime, bin. Each block lists everything its
// layer may not import; type-only imports count too (the core rule does not exempt them).
const upper = (...dirs) => ({ group: dirs.flatMap(d => [`**/${d}/**`, `./${d}/**`]), message: 'import only from layers below this one (eslint.config.js lists them).' })
const top = { group: ['**/plugins/**', '**/bin/**', '**/app.js', '**/runtime.js', '**/cli.js'], message: 'the server composition (app, runtime, bin, plugins) sits above every src/ layer.' }
const toolImplementations = { group: ['**/tools/*', '!**/tools/define-*'], message: 'below tools/ only the authoring API (tools/define-*) may be imported.' }
const noFastify = { group: ['fastify', 'fastify-plugin', '@fastify/*'], message: 'src/ below app.ts is transport-agnostic.' }
const noFs = { group: ['fs', 'fs/*', 'node:fs', 'node:fs/*'], message: 'Workspace files are reached only through the workspace service (src/services/), never node:fs directly.' }
const noSdk = { group: ['@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'], message: 'Only src/mcp/ and plugins/mcp-http import the SDK.' }
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] })

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/.corpus/**', 'test/fixtures/symbols/**', 'bench/.scratch/**', '.team/**', '.tmp-*/**', '**/*.tmp.*'] }),
  { files: ['src/**/*.ts', 'plugins/**/*.ts'], rules: { 'no-console': 'error' } },
  {
    files: ['src/config.ts', 'src/errors.ts', 'src/logger.ts'],
    rules: restrict(noSdk, top, { group: ['./services/*', './tools/*', './mcp/*', './guide/*', './fixtures/*'], message: 'config/errors/logger are leaves.' })
  },
  { files: ['src/services/**/*.ts'], rules: restrict(noFastify, noSdk, top, upper('guide', 'tools', 'mcp', 'fixtures')) },
  { files: ['src/guide/**/*.ts'], rules: restrict(noFastify, noSdk, noFs, top, upper('mcp', 'fixtures'), toolImplementations) },
  { files: ['src/tools/**/*.ts'], rules: restrict(noFastify, noSdk, noFs, top, upper('guide', 'mcp', 'fixtures')) },
  { files: ['src/mcp/**/*.ts'], rules: restrict(noFastify, noFs, top, upper('guide', 'fixtures'), toolImplementations) },
  { files: ['src/fixtures/**/*.ts'], rules: restrict(noFastify, noFs, top, upper('mcp')) },
  { files: ['plugins/**/*.ts'], rules: restrict(noFs, { group: ['**/bin/**', '**/app.js', '**/runtime.js', '**/cli.js'], message: 'plugins are composed by app.ts, never the other way round.' }) }
]
