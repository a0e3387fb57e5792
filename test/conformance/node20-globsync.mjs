// Node 20 lacks fs.globSync (added in 22), which @modelcontextprotocol/conformance imports by name.
// Loaded with `node --import`, this registers a resolve hook that hands the suite's bundle an `fs`
// with a small globSync (used only by its tier-check, for `**/checks.json`); everything else is node:fs.
import { isMainThread } from 'node:worker_threads'
import { register } from 'node:module'

const SHIM = `
import fs from 'node:fs'
import { join, relative, sep } from 'node:path'
export * from 'node:fs'
export default fs
function toRegExp (pattern) {
  let out = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '*' && pattern[i + 1] === '*') {
      i++
      if (pattern[i + 1] === '/') { i++; out += '(?:.*/)?' } else out += '.*'
    } else if (c === '*') out += '[^/]*'
    else if (c === '?') out += '[^/]'
    else out += c.replace(/[.+^$\\{}()|[\\]\\\\]/g, '\\\\$&')
  }
  return new RegExp('^' + out + '$')
}
function walk (dir, root, out, depth) {
  if (depth > 64) return
  let entries
  try { entries = fs.readdirSync(dir, { withFileTypes: true }) } catch { return }
  for (const e of entries) {
    const full = join(dir, e.name)
    out.push(relative(root, full).split(sep).join('/'))
    if (e.isDirectory()) walk(full, root, out, depth + 1)
  }
}
export const globSync = fs.globSync ?? function globSync (patterns, options = {}) {
  const cwd = options.cwd === undefined ? process.cwd() : String(options.cwd)
  const res = (Array.isArray(patterns) ? patterns : [patterns]).map(toRegExp)
  const all = []
  walk(cwd, cwd, all, 0)
  return all.filter(p => res.some(re => re.test(p))).map(p => p.split('/').join(sep))
}
`
const SHIM_URL = 'data:text/javascript,' + encodeURIComponent(SHIM)

/** Resolve hook: `fs` imported by a conformance bundle (0.1.x, or the 0.2 alpha installed as conformance-next) becomes the shim. */
export async function resolve (specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && /\/@modelcontextprotocol\/conformance(?:-next)?\//.test(context.parentURL ?? '')) {
    return { url: SHIM_URL, shortCircuit: true }
  }
  return next(specifier, context)
}

if (isMainThread) register(import.meta.url)
