// The build's freshness check, shared by `npm start` and `npm pack` (prepack): builds only when a build input is
// newer than the bin, so a fresh checkout packs a tarball that has its bin, and a built one packs at once.
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
/** The shipped bin's entry. */
export const bin = path.join(root, 'dist', 'bin', 'cli.js')
const INPUTS = ['src', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']

/** Newest modification time of a file, or of any file below a folder. */
function newest (file) {
  const st = statSync(file, { throwIfNoEntry: false })
  if (st === undefined) return 0
  if (!st.isDirectory()) return st.mtimeMs
  return Math.max(st.mtimeMs, ...readdirSync(file).map(name => newest(path.join(file, name))))
}

/** Builds (build.mjs, in this process) when the bin is missing or older than an input, saying why on stderr. */
export async function buildIfStale () {
  const built = existsSync(bin) ? statSync(bin).mtimeMs : 0
  const stale = INPUTS.map(input => path.join(root, input)).filter(input => newest(input) > built)
  if (stale.length === 0) return
  process.stderr.write(`workspace-mcp: building (${built === 0 ? 'no build yet' : `newer: ${stale.map(s => path.relative(root, s)).join(', ')}`})\n`)
  // tsc writes to stdout; a caller's stdout (npm pack --json) carries only its own output.
  const { build } = await import('./build.mjs')
  await build({ tscOutput: 2 })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildIfStale()
