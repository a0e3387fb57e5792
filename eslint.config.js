import { readdirSync } from 'node:fs'
import neostandard from 'neostandard'

// Layers, bottom up: base (config, errors, logger) → services → tool-api (the tool-authoring API) → guide → tool-kit (what
// tools share) → tools → mcp → http (the Fastify plugins), app, runtime, bin. Each block lists everything its layer
// may not import, by folder; type-only imports count too (the core rule does not exempt them).
const upper = (...dirs) => ({ group: dirs.flatMap(d => [`**/${d}/**`, `./${d}/**`]), message: 'import only from layers below this one (eslint.config.js lists them).' })
const top = { group: ['**/http/**', '**/bin/**', '**/app.js', '**/runtime.js', '**/cli.js'], message: 'the server composition (app, runtime, bin, http) sits above every other src/ layer.' }
const noFastify = { group: ['fastify', 'fastify-plugin', '@fastify/*'], message: 'src/ below app.ts is transport-agnostic.' }
const noFs = { group: ['fs', 'fs/*', 'node:fs', 'node:fs/*'], message: 'Workspace files are reached only through the workspace service (src/services/), never node:fs directly.' }
const noSdk = { group: ['@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'], message: 'Only src/mcp/ and src/http/mcp-http import the SDK.' }
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
const serviceLayer = [noFastify, noSdk, top, upper('tool-api', 'guide', 'tool-kit', 'tools', 'mcp')]
const toolLayer = [noFastify, noSdk, noFs, top, ...frontDoors()]

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/.corpus/**', 'bench/.retrieval/**', 'test/fixtures/symbols/**', 'test/fixtures/references/**', 'bench/.scratch/**', '.team/**', '.tmp-*/**', '**/*.tmp.*'] }),
  // One statement per module imported (type-only names join it: `import { a, type B }`).
  { rules: { 'no-duplicate-imports': 'error' } },
  {
    files: ['src/**/*.ts'],
    // Type-aware, on the product only (the program of tsconfig.build.json: ~9 s of CPU added to a full lint).
    languageOptions: { parserOptions: { project: './tsconfig.build.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      'no-console': 'error',
      // A promise nobody awaits ends in a handler that cannot throw, or is marked `void` with the reason beside it.
      '@typescript-eslint/no-floating-promises': 'error',
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  { files: ['src/base/**/*.ts'], rules: restrict(noSdk, top, upper('services', 'tool-api', 'guide', 'tool-kit', 'tools', 'mcp')) },
  { files: ['src/services/*.ts'], rules: restrict(...serviceLayer, ...frontDoors()) },
  ...SERVICE_FOLDERS.map(folder => ({ files: [`src/services/${folder}/**/*.ts`], rules: restrict(...serviceLayer, ...frontDoors(folder)) })),
  { files: ['src/tool-api/**/*.ts'], rules: restrict(...toolLayer, upper('guide', 'tool-kit', 'tools', 'mcp')) },
  { files: ['src/guide/**/*.ts'], rules: restrict(...toolLayer, upper('tool-kit', 'tools', 'mcp')) },
  { files: ['src/tool-kit/**/*.ts'], rules: restrict(...toolLayer, upper('guide', 'tools', 'mcp')) },
  // A tool imports the kit and the API, never another tool; the list of them all is the composition's (src/tool-list.ts).
  { files: ['src/tools/**/*.ts'], rules: restrict(...toolLayer, upper('guide', 'mcp'), { group: ['./*'], message: 'a tool imports no other tool: what two tools share belongs in src/tool-kit/.' }) },
  { files: ['src/mcp/**/*.ts'], rules: restrict(noFastify, noFs, top, upper('guide', 'tool-kit', 'tools'), ...frontDoors()) },
  { files: ['src/*.ts', 'src/bin/**/*.ts'], rules: restrict(...frontDoors()) },
  { files: ['src/http/**/*.ts'], rules: restrict(noFs, { group: ['**/bin/**', '**/app.js', '**/runtime.js', '**/cli.js'], message: 'the http plugins are composed by app.ts, never the other way round.' }, ...frontDoors()) }
]
