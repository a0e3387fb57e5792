import t from 'tap'
import fs from 'node:fs'
import semver from 'semver'
// @ts-expect-error -- a plain ES module script without types
import { missingPublishFields as untypedCheck } from '../../scripts/publish-check.mjs'

// What `npm ci` meets on the oldest Node we declare: every locked package runs there (npm prints an
// EBADENGINE warning for each one that says it does not), and every install script is one we reviewed.

interface Locked { engines?: { node?: string } | string[], hasInstallScript?: boolean, dev?: boolean }
const read = (file: string): unknown => JSON.parse(fs.readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'))
const pkg = read('package.json') as { engines: { node: string }, allowScripts: Record<string, boolean> }
const lock = read('package-lock.json') as { packages: Record<string, Locked> }
const floor = semver.minVersion(pkg.engines.node)?.version ?? ''

// Only mcp-proxy's own CLI imports pipenet (for tunnels); fastmcp, a peer the bench measures, loads
// mcp-proxy's library, which does not. Every pipenet release wants Node 22, so npm ci on Node 20 warns once.
const KNOWN_OUTSIDE_FLOOR: Record<string, string> = {
  'node_modules/pipenet': 'a bench peer\'s unused CLI dependency'
}

const locked = Object.entries(lock.packages).filter(([where]) => where !== '')
const nameOf = (where: string) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length)

t.test('every locked package declares that it runs on the oldest Node package.json admits', async (t) => {
  t.match(floor, /^\d+\.\d+\.\d+$/, `engines.node ${pkg.engines.node} has a floor`)
  const outside = locked
    .filter(([, p]) => typeof p.engines === 'object' && !Array.isArray(p.engines) && typeof p.engines.node === 'string')
    .filter(([, p]) => !semver.satisfies(floor, (p.engines as { node: string }).node))
    .map(([where, p]) => `${where} wants Node ${(p.engines as { node: string }).node}${p.dev === true ? '' : ' (installed with the package)'}`)
  t.strictSame(outside.filter(line => !Object.keys(KNOWN_OUTSIDE_FLOOR).some(known => line.startsWith(`${known} `))), [],
    `packages that do not run on Node ${floor}: raise engines.node, override the dependency, or replace it`)
  for (const known of Object.keys(KNOWN_OUTSIDE_FLOOR)) {
    t.ok(outside.some(line => line.startsWith(`${known} `)), `${known} is still outside the floor (else drop it from the list)`)
  }
})

t.test('the README\'s first command names the same floor', async (t) => {
  const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  t.match(readme, `(Node ≥ ${pkg.engines.node.replace(/^>=/, '')})`)
})

t.test('every dependency with an install script is approved or denied in allowScripts, and nothing else is', async (t) => {
  const withScripts = [...new Set(locked.filter(([, p]) => p.hasInstallScript === true).map(([where]) => nameOf(where)))].sort()
  t.strictSame(Object.keys(pkg.allowScripts).sort(), withScripts,
    'npm warns of each install script allowScripts does not name (review it: npm install-scripts approve|deny <pkg>)')
  // Two scripts are needed: esbuild's installs its platform binary, the SQLite binding's picks its prebuild.
  t.strictSame(Object.entries(pkg.allowScripts).filter(([, allowed]) => allowed).map(([name]) => name).sort(),
    ['@photostructure/sqlite', 'esbuild'])
})

t.test('npm publish refuses a package.json that does not say where the repository, its issues and its home are', async (t) => {
  const missingPublishFields = untypedCheck as (pkg: object) => string[]
  t.strictSame(missingPublishFields({}), ['repository', 'bugs', 'homepage'])
  t.strictSame(missingPublishFields({ repository: { type: 'git', url: 'git+https://example.org/w.git' }, bugs: 'https://example.org/w/issues', homepage: 'http://example.org' }), ['homepage'], 'https only')
  t.strictSame(missingPublishFields({ repository: 'git+https://example.org/w.git', bugs: { url: 'https://example.org/w/issues' }, homepage: 'https://example.org/w' }), [])
  t.equal((read('package.json') as { scripts: Record<string, string> }).scripts.prepublishOnly, 'node scripts/publish-check.mjs')
})
