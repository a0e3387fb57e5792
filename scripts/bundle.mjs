#!/usr/bin/env node
// Bundles the tsc output (dist/src) into the shipped bin (dist/bin): one ESM entry, code-split so
// stdio never loads Fastify. Source maps point back to src/ only — dependencies'
// sources are cut out of them — so coverage of the spawned-bin tests lands on our files and on
// nothing else, and the maps stay small (no sources inlined). The stdio command also ships as one
// CommonJS bundle with V8's code cache (src/code-cache.ts says why), made by a training session in a
// child process (scripts/code-cache-train.mjs). Last, the shipped YAML is parsed into the table
// src/services/yaml.ts reads, so a server over the shipped docs never loads the YAML parser.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { decode, encode } from '@jridgewell/sourcemap-codec'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const outdir = path.join(root, 'dist', 'bin')

rmSync(outdir, { recursive: true, force: true }) // stale chunks never ship

/** The built thread modules: every src/services module named `*-worker.ts`, as tsc wrote it. */
function threadModules () {
  const services = path.join(root, 'src', 'services')
  return readdirSync(services, { recursive: true }).filter(name => name.endsWith('-worker.ts'))
    .map(name => path.join(root, 'dist', 'src', 'services', name.replace(/\.ts$/, '.js')))
}

/** What both builds share: Node 20, ripgrep's binary left to its package, maps without sources. */
const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning', external: ['@vscode/ripgrep', 'ajv', 'pdfjs-dist', '@photostructure/sqlite'], sourcemap: 'linked', sourcesContent: false }
await build({
  ...common,
  // Each thread module is an entry of its own, named after it: a Worker loads it by URL beside the chunk that
  // starts it (services/threads/thread.ts, threadModule).
  entryPoints: {
    cli: path.join(root, 'dist', 'src', 'cli.js'),
    ...Object.fromEntries(threadModules().map(file => [path.basename(file, '.js'), file]))
  },
  format: 'esm',
  splitting: true,
  outdir,
  // Bundled CommonJS dependencies call require(); ESM has none, so give the bundle one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" }
})

// The stdio command again, as one CommonJS file: what vm.Script (and so V8's code cache) can run.
const stdioBundle = path.join(outdir, 'stdio.cjs')
await build({
  ...common,
  entryPoints: [path.join(root, 'dist', 'src', 'bin', 'stdio.js')],
  format: 'cjs',
  outfile: stdioBundle,
  // import() of a package becomes require(): a vm.Script has no module loader for dynamic imports.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" }
})

const ours = (source) => /^(\.\.\/)+src\//.test(source)

/** Drops every mapping into a source that is not ours, and those sources themselves. */
function pruneMap (file) {
  const map = JSON.parse(readFileSync(file, 'utf8'))
  const renumber = new Map()
  const sources = []
  map.sources.forEach((source, index) => {
    if (!ours(source)) return
    renumber.set(index, sources.length)
    sources.push(source)
  })
  const lines = decode(map.mappings).map(segments => segments
    .filter(segment => segment.length === 1 || renumber.has(segment[1]))
    .map(segment => segment.length === 1 ? segment : [segment[0], renumber.get(segment[1]), ...segment.slice(2)]))
  writeFileSync(file, JSON.stringify({ ...map, sources, mappings: encode(lines) }))
}

for (const name of readdirSync(outdir)) if (name.endsWith('.map')) pruneMap(path.join(outdir, name))

// esbuild writes strings and identifiers as ASCII, but keeps some comments verbatim: one arrow in a
// comment makes V8 hold the whole file as a two-byte string, and every start reads it slower. Only
// whole comment lines are touched (a dependency's regular expression may hold such characters).
const COMMENT_LINE = /^[ \t]*(?:\/\/|\/\*|\*).*$/gm
for (const name of readdirSync(outdir).filter(n => /\.c?js$/.test(n))) {
  const file = path.join(outdir, name)
  const text = readFileSync(file, 'utf8')
  const ascii = text.replace(COMMENT_LINE, line => line.replace(/[^\t\x20-\x7e]/g, '?'))
  if (ascii !== text) writeFileSync(file, ascii)
}

/** Every YAML text the package ships: the docs overlay and each template's front matter. */
function shippedYaml () {
  const templates = path.join(root, 'docs', 'templates')
  const fronts = readdirSync(templates).filter(n => n.endsWith('.md')).sort()
    .map(n => frontMatter(readFileSync(path.join(templates, n), 'utf8'))?.yaml)
  return [readFileSync(path.join(root, 'docs', 'tools.yaml'), 'utf8'), ...fronts.filter(text => text !== undefined)]
}

const load = (file) => import(pathToFileURL(path.join(root, 'dist', 'src', file)).href)
const { yamlTable, YAML_TABLE_FILE } = await load('services/yaml.js')
const { frontMatter } = await load('guide/prompts.js')
const table = yamlTable(shippedYaml())
for (const dir of [outdir, path.join(root, 'dist', 'src', 'services')]) writeFileSync(path.join(dir, YAML_TABLE_FILE), table)

/** Runs a short stdio session on the CommonJS bundle in a child that then writes the bundle's code cache. */
async function trainCodeCache (bundle) {
  const { cacheFileOf } = await load('code-cache.js')
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'wmcp-train-'))
  writeFileSync(path.join(workspace, 'README.md'), '# Training\n\nA file to list, read and search.\n')
  const requests = [
    { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'build', version: '1' } } },
    { method: 'notifications/initialized' },
    { id: 2, method: 'tools/list', params: {} },
    { id: 3, method: 'tools/call', params: { name: 'list_directory', arguments: { path: '.' } } },
    { id: 4, method: 'tools/call', params: { name: 'read_files', arguments: { files: [{ path: 'README.md' }] } } },
    { id: 5, method: 'tools/call', params: { name: 'search_regex', arguments: { pattern: 'file' } } }
  ]
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'code-cache-train.mjs'), bundle, workspace], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += chunk })
  const answered = new Set()
  const failed = []
  child.stdout.on('data', chunk => {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      const answer = JSON.parse(line)
      answered.add(answer.id)
      // An error would train the cache on error paths only: the build fails instead.
      if (answer.error !== undefined || answer.result?.isError === true) failed.push(line)
    }
    if (requests.every(r => r.id === undefined || answered.has(r.id))) child.stdin.end()
  })
  for (const request of requests) child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...request }) + '\n')
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const code = await new Promise(resolve => child.once('exit', resolve))
  clearTimeout(timer)
  rmSync(workspace, { recursive: true, force: true })
  if (code !== 0 || failed.length > 0 || !existsSync(cacheFileOf(bundle))) throw new Error(`code cache training failed (exit ${code}):\n${failed.join('\n')}\n${stderr}`)
}

await trainCodeCache(stdioBundle)
