import neostandard from 'neostandard'

const noFastify = { group: ['fastify', 'fastify-plugin', '@fastify/*'], message: 'src/ below app.ts is transport-agnostic.' }
const noFs = { group: ['fs', 'fs/*', 'node:fs', 'node:fs/*'], message: 'Workspace files are reached only through the workspace service (src/services/), never node:fs directly.' }
const noSdk = { group: ['@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'], message: 'Only src/mcp/ and plugins/mcp-http import the SDK.' }

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/.corpus/**', 'bench/.scratch/**', '.team/**', '.tmp-*/**', '**/*.tmp.*'] }),
  { files: ['src/**/*.ts', 'plugins/**/*.ts'], rules: { 'no-console': 'error' } },
  {
    files: ['src/config.ts', 'src/errors.ts', 'src/logger.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noSdk, { group: ['./services/*', './tools/*', './mcp/*', '../plugins/*'], message: 'config/errors/logger are leaves.' }] }] }
  },
  {
    files: ['src/tools/**/*.ts', 'src/services/**/*.ts', 'src/guide/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noFastify, noSdk, { group: ['**/mcp/**', '**/plugins/**', '**/bin/**', '**/app.js'], message: 'Tools and services sit below mcp/.' }] }] }
  },
  {
    files: ['src/tools/**/*.ts', 'src/guide/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noFastify, noSdk, noFs, { group: ['**/mcp/**', '**/plugins/**', '**/bin/**', '**/app.js'], message: 'Tools and services sit below mcp/.' }] }] }
  },
  {
    files: ['plugins/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noFs] }] }
  },
  {
    files: ['src/mcp/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noFastify, noFs, { group: ['**/plugins/**', '**/bin/**', '**/app.js'], message: 'mcp/ must not know about Fastify.' }] }] }
  }
]
