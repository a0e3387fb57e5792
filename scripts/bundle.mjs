#!/usr/bin/env node
// Bundles the tsc output (dist/src) into the shipped bin (dist/bin): one ESM entry, code-split so
// stdio never loads Fastify. Source maps point back to src/ and plugins/ only — dependencies'
// sources are cut out of them — so coverage of the spawned-bin tests lands on our files and on
// nothing else, and the maps stay small (no sources inlined). Last, the shipped YAML is parsed into
// the table src/services/yaml.ts reads, so a server over the shipped docs never loads the YAML parser.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { decode, encode } from '@jridgewell/sourcemap-codec'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const outdir = path.join(root, 'dist', 'bin')

rmSync(outdir, { recursive: true, force: true }) // stale chunks never ship
await build({
  entryPoints: [path.join(root, 'dist', 'src', 'cli.js')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  splitting: true,
  outdir,
  logLevel: 'warning',
  external: ['@vscode/ripgrep'],
  sourcemap: 'linked',
  sourcesContent: false,
  // Bundled CommonJS dependencies call require(); ESM has none, so give the bundle one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" }
})

const ours = (source) => /^(\.\.\/)+(src|plugins)\//.test(source)

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

for (const name of readdirSync(outdir)) if (name.endsWith('.js.map')) pruneMap(path.join(outdir, name))

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
