import { rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import picomatch from 'picomatch'

/** Rule files ripgrep reads in every directory (later wins). */
const RULE_FILES = ['.gitignore', '.ignore']
/** Largest rule file read (as the workspace's own ignore rules). */
const RULE_FILE_BYTES = 1024 * 1024
/** Most rebased rules one gitignore line may turn into (`**` expands into alternatives). */
const MAX_ALTERNATIVES = 64

/** Reads a workspace file through the jail (WorkspaceService.readText). */
export type ReadText = (relative: string, maxBytes?: number) => Promise<string | undefined>

/** True when one component glob of a gitignore pattern matches one path component. */
function componentMatches (glob: string, name: string): boolean {
  if (!/[*?[\\]/.test(glob)) return glob === name
  return picomatch.isMatch(name, glob, { dot: true })
}

/**
 * The patterns (component lists, relative to the searched folder) that `pattern` — anchored at an ancestor
 * — still selects once the components `rest` between that ancestor and the folder are consumed. A pattern
 * used up before `rest` names the folder itself or one of its ancestors: ripgrep searches an explicitly
 * given folder whatever the rules say of it, so such a pattern selects nothing inside.
 *
 * Each state is (components of `pattern` used, components of `rest` consumed) and is visited once: a line
 * of many `**` would otherwise be explored in every way `rest` can be spread over them (a 60-byte line cost
 * a minute of CPU under a folder 12 deep). Iterative, so a line of thousands of components cannot overflow the stack.
 */
function remainders (pattern: string[], rest: string[]): string[] {
  const out = new Set<string>()
  const seen = new Set<number>()
  // Depth-first, `**` matching nothing tried before `**` consuming a component (the order of the alternatives).
  const stack: Array<[number, number]> = [[0, 0]]
  while (stack.length > 0 && out.size < MAX_ALTERNATIVES) {
    const [i, j] = stack.pop() as [number, number]
    const state = i * (rest.length + 1) + j
    if (seen.has(state)) continue
    seen.add(state)
    if (j === rest.length) {
      if (i < pattern.length) out.add(pattern.slice(i).join('/'))
    } else if (pattern[i] === '**') {
      stack.push([i, j + 1], [i + 1, j])
    } else if (i < pattern.length && componentMatches(pattern[i], rest[j])) {
      stack.push([i + 1, j + 1])
    }
  }
  return [...out]
}

/**
 * Rewrites one gitignore line found in the folder `dir` (relative to the root) so that, matched relative to
 * the searched folder `target` (ripgrep matches `--ignore-file` globs relative to its cwd), it selects the
 * same paths: an unanchored name may sit at any depth, an anchored one is walked down from `dir` to `target`.
 * `dir` is `target` itself or one of its ancestors. Returns the rebased lines (none when nothing inside is selected).
 */
export function rebaseRule (line: string, dir: string, target = '.'): string[] {
  let rule = line.replace(/(?<!\\)\s+$/, '')
  if (rule === '' || rule.startsWith('#')) return []
  const negated = rule.startsWith('!')
  if (negated) rule = rule.slice(1)
  const dirOnly = rule.endsWith('/')
  if (dirOnly) rule = rule.slice(0, -1)
  const anchored = rule.includes('/')
  if (rule.startsWith('/')) rule = rule.slice(1)
  if (rule === '') return []
  const wrap = (r: string): string => `${negated ? '!' : ''}${r}${dirOnly ? '/' : ''}`
  if (!anchored) return [wrap(rule)]
  const below = (p: string): string[] => p === '.' ? [] : p.split('/')
  const rest = below(target).slice(below(dir).length)
  // Consecutive `**` match what one does (gitignore(5)); collapsing them keeps the states few.
  const components = rule.split('/').filter((c, k, all) => c !== '**' || all[k - 1] !== '**')
  return remainders(components, rest).map(r => wrap(`/${r}`))
}

/** A temporary ignore file for ripgrep, removed by `dispose`. */
export interface AncestorRules {
  /** Extra ripgrep arguments (`--ignore-file <tmp>`), empty when no ancestor has rules. */
  args: string[]
  dispose(): Promise<void>
}

/**
 * ripgrep reads ignore files of every parent of its search path, up to `/` — including files above the
 * workspace root, which must not apply. So searches run with `--no-ignore-parent` from inside the searched
 * folder, and the rules of the folders from the root down to (not including) it are handed over explicitly,
 * rebased onto it. Rule files are read through the workspace jail (a rule file linked outside is not read).
 */
export async function ancestorRules (readText: ReadText, target: string): Promise<AncestorRules> {
  const none: AncestorRules = { args: [], dispose: async () => {} }
  if (target === '.') return none
  const parts = target.split('/')
  const lines: string[] = []
  for (let depth = 0; depth < parts.length; depth++) {
    const dir = depth === 0 ? '.' : parts.slice(0, depth).join('/')
    for (const name of RULE_FILES) {
      const text = await readText(dir === '.' ? name : `${dir}/${name}`, RULE_FILE_BYTES) ?? ''
      for (const line of text.split('\n')) lines.push(...rebaseRule(line, dir, target))
    }
  }
  if (lines.length === 0) return none
  const file = path.join(os.tmpdir(), `workspace-mcp-ignore-${crypto.randomUUID()}`)
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o600 })
  return { args: ['--ignore-file', file], dispose: () => rm(file, { force: true }) }
}
