// Where each retrieval question set's tree comes from, whether it is here at the version the questions were
// written against, and its copy into bench/.retrieval/trees (the trees the servers index). One place for the bench
// and for test/docs/retrieval-questions.test.ts, so both judge a tree the same way.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import picomatch from 'picomatch'

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The folder each tree is read from: Linux 6.1 (bench/corpus.sh), this repository, its locked node_modules, Debian's Python 3.11. */
export const SOURCES = {
  'linux-source-6.1': path.join(repo, 'bench', '.corpus', 'linux-source-6.1'),
  'workspace-mcp': repo,
  'js-libraries': path.join(repo, 'node_modules'),
  'python3.11-stdlib': '/usr/lib/python3.11'
}

/** What to run when a tree is missing, by tree. */
const REMEDY = {
  'linux-source-6.1': 'sh bench/corpus.sh unpacks it',
  'workspace-mcp': 'it is this repository',
  'js-libraries': 'run npm ci: the packages are devDependencies (or their dependencies) locked in package-lock.json',
  'python3.11-stdlib': 'it is Debian 12\'s libpython3.11-stdlib (apt-get install libpython3.11-stdlib)'
}

/** The version package-lock.json locks for a package of node_modules, or undefined. */
function lockedVersion (name) {
  const lock = JSON.parse(readFileSync(path.join(repo, 'package-lock.json'), 'utf8'))
  return lock.packages[`node_modules/${name}`]?.version
}

/** The installed version of a Debian package, or undefined where dpkg is not (or the package is not installed). */
function debianVersion (name) {
  try {
    // dpkg-query's own format field, not a template string.
    return execFileSync('dpkg-query', ['-W', '-f', '$' + '{Version}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined
  } catch {
    return undefined
  }
}

/**
 * Why a set cannot be asked here, or undefined when its tree is present: a folder missing from its source, or (for
 * node_modules) a package whose installed version is not the one the set was written against and the lock names.
 */
export function missingTree (set) {
  const source = SOURCES[set.tree]
  if (source === undefined) return `bench/retrieval: unknown tree "${set.tree}" (known: ${Object.keys(SOURCES).join(', ')})`
  const absent = set.folders.find(folder => !existsSync(path.join(source, folder)))
  if (absent !== undefined) return `the ${set.tree} tree is not here: ${path.join(source, absent)} is missing (${REMEDY[set.tree]})`
  if (set.tree !== 'js-libraries') return undefined
  for (const [name, version] of Object.entries(set.locked ?? {})) {
    const installed = JSON.parse(readFileSync(path.join(source, name, 'package.json'), 'utf8')).version
    if (installed !== version || lockedVersion(name) !== version) {
      return `the ${set.tree} tree is not at the versions its questions were written against: ${name} ${version} wanted, ` +
        `${installed} installed, ${lockedVersion(name) ?? 'none'} in package-lock.json (${REMEDY[set.tree]})`
    }
  }
  return undefined
}

/** What differs from the Debian packages a set names (a note for the report: the questions were checked on those), or undefined. */
export function versionNote (set) {
  if (set.tree !== 'python3.11-stdlib') return undefined
  const differing = Object.entries(set.locked ?? {}).map(([name, version]) => ({ name, version, found: debianVersion(name) })).filter(p => p.found !== p.version)
  return differing.length === 0 ? undefined : differing.map(p => `${p.name} ${p.found ?? 'not found by dpkg'} here, questions written on ${p.version}`).join('; ')
}

/** Copies a set's folders (or files) from its source into `tree`, mtimes kept (the index and vectors stay valid), minus its `exclude` globs. */
export function copyTree (set, tree, source = SOURCES[set.tree]) {
  const excluded = picomatch(set.exclude ?? [])
  rmSync(tree, { recursive: true, force: true })
  for (const folder of set.folders) {
    mkdirSync(path.dirname(path.join(tree, folder)), { recursive: true })
    cpSync(path.join(source, folder), path.join(tree, folder), {
      recursive: true,
      preserveTimestamps: true,
      verbatimSymlinks: true,
      filter: (from) => !excluded(path.relative(source, from))
    })
  }
}
