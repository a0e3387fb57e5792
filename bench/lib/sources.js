// What a published run measured, as content hashes of the server's sources: src/ by part (each folder of src/ and
// of src/services/), so a later change says which parts' figures are stale. Hashes of
// the files themselves, not of git history, so a shallow clone or a tarball checks them too.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** The folders whose own files make one part each. */
const PART_ROOTS = ['src']
/** Folders whose subfolders are parts of their own (a service each). */
const SPLIT = new Set(['src', 'src/services'])

const sha = (text) => createHash('sha256').update(text).digest('hex')

/** The part a source file belongs to: its folder, cut at the first level below a split folder. */
function partOf (relative) {
  const folders = path.posix.dirname(relative).split('/')
  let part = folders[0]
  for (const name of folders.slice(1)) {
    if (!SPLIT.has(part)) break
    part = `${part}/${name}`
  }
  return part
}

/** Every file under the part roots, relative to `root` with forward slashes, sorted. */
function sourceFiles (root) {
  const files = []
  const walk = (relative) => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = `${relative}/${entry.name}`
      if (entry.isDirectory()) walk(child)
      else if (entry.isFile()) files.push(child)
    }
  }
  for (const top of PART_ROOTS) walk(top)
  return files.sort()
}

/** The sources' hash as a whole and by part (16 hex digits each): what the run measured. */
export function sourcesHash (root) {
  const parts = new Map()
  for (const file of sourceFiles(root)) {
    const part = partOf(file)
    parts.set(part, `${parts.get(part) ?? ''}${file}\0${sha(readFileSync(path.join(root, file)))}\n`)
  }
  const byPart = Object.fromEntries([...parts].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([part, list]) => [part, sha(list).slice(0, 16)]))
  const whole = sha(Object.entries(byPart).map(([part, hash]) => `${part} ${hash}\n`).join('')).slice(0, 16)
  return { whole, byPart }
}

/** The results document's line for `hash`. */
export function sourcesLine ({ whole, byPart }) {
  return `- Sources: ${whole} (src/; by part: ${Object.entries(byPart).map(([part, hash]) => `${part} ${hash}`).join(', ')})`
}

/** The hashes a results document's Sources line records; undefined when it has none. */
export function recordedSources (document) {
  // Runs published before the Fastify plugins moved into src/http/ name "src/ and plugins/".
  const line = /^- Sources: ([0-9a-f]{16}) \(src\/(?: and plugins\/)?; by part: (.*)\)$/m.exec(document)
  if (line === null) return undefined
  const byPart = Object.fromEntries(line[2].split(', ').map(entry => entry.split(' ')))
  return { whole: line[1], byPart }
}

/** The parts whose sources differ between two hashes: changed, added or gone. */
export function staleParts (recorded, current) {
  const names = new Set([...Object.keys(recorded.byPart), ...Object.keys(current.byPart)])
  return [...names].filter(name => recorded.byPart[name] !== current.byPart[name]).sort()
}

// `node bench/lib/sources.js`: the parts changed since the published run (bench/results/latest.md).
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  const root = new URL('../..', import.meta.url).pathname
  const recorded = recordedSources(readFileSync(path.join(root, 'bench/results/latest.md'), 'utf8'))
  const stale = recorded === undefined ? ['(no Sources line: every part)'] : staleParts(recorded, sourcesHash(root))
  process.stdout.write(stale.length === 0 ? 'the published figures measured these sources\n' : `changed since the published run: ${stale.join(', ')}\n`)
}
