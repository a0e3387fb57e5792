import { readdirSync } from 'node:fs'
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
// The test tree (helpers, fixtures) never enters the product, whatever layer asks.
const noTests = { group: ['**/test/**'], message: 'test helpers and fixtures never enter the product bundle.' }
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns: [...patterns, noTests] }] })

// Each folder of src/services is a subsystem with one front door, its index.ts: from outside the folder only
// that file may be imported; everything else in it is private to it.
const SERVICE_FOLDERS = readdirSync(new URL('./src/services/', import.meta.url), { withFileTypes: true }).filter(d => d.isDirectory()).map(d => d.name)
const frontDoors = (own) => SERVICE_FOLDERS.filter(folder => folder !== own).map(folder => ({
  group: [`**/services/${folder}/*`, `!**/services/${folder}/index.js`, `../${folder}/*`, `!../${folder}/index.js`, `./${folder}/*`, `!./${folder}/index.js`],
  message: `services/${folder}/ is reached through its front door, services/${folder}/index.js.`
}))
const serviceLayer = [noFastify, noSdk, top, upper('guide', 'tools', 'mcp')]

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/.corpus/**', 'bench/.retrieval/**', 'test/fixtures/symbols/**', 'test/fixtures/references/**', 'bench/.scratch/**', '.team/**', '.tmp-*/**', '**/*.tmp.*'] }),
  // One statement per module imported (type-only names join it: `import { a, type B }`).
  { rules: { 'no-duplicate-imports': 'error' } },
  {
    files: ['src/**/*.ts', 'plugins/**/*.ts'],
    // Type-aware, on the product only (the program of tsconfig.build.json: ~9 s of CPU added to a full lint).
    languageOptions: { parserOptions: { project: './tsconfig.build.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      'no-console': 'error',
      // A promise nobody awaits ends in a handler that cannot throw, or is marked `void` with the reason beside it.
      '@typescript-eslint/no-floating-promises': 'error',
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  {
    files: ['src/config.ts', 'src/errors.ts', 'src/logger.ts'],
    rules: restrict(noSdk, top, { group: ['./services/*', './tools/*', './mcp/*', './guide/*'], message: 'config/errors/logger are leaves.' })
  },
  { files: ['src/services/*.ts'], rules: restrict(...serviceLayer, ...frontDoors()) },
  ...SERVICE_FOLDERS.map(folder => ({ files: [`src/services/${folder}/**/*.ts`], rules: restrict(...serviceLayer, ...frontDoors(folder)) })),
  { files: ['src/guide/**/*.ts'], rules: restrict(noFastify, noSdk, noFs, top, upper('mcp'), toolImplementations, ...frontDoors()) },
  { files: ['src/tools/**/*.ts'], rules: restrict(noFastify, noSdk, noFs, top, upper('guide', 'mcp'), ...frontDoors()) },
  { files: ['src/mcp/**/*.ts'], rules: restrict(noFastify, noFs, top, upper('guide'), toolImplementations, ...frontDoors()) },
  { files: ['src/*.ts', 'src/bin/**/*.ts'], ignores: ['src/config.ts', 'src/errors.ts', 'src/logger.ts'], rules: restrict(...frontDoors()) },
  { files: ['plugins/**/*.ts'], rules: restrict(noFs, { group: ['**/bin/**', '**/app.js', '**/runtime.js', '**/cli.js'], message: 'plugins are composed by app.ts, never the other way round.' }, ...frontDoors()) }
]
