import { randomUUID } from 'node:crypto'
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
 */
function remainders (pattern: string[], rest: string[], out: Set<string>): void {
  if (out.size >= MAX_ALTERNATIVES) return
  if (rest.length === 0) {
    if (pattern.length > 0) out.add(pattern.join('/'))
    return
  }
  if (pattern.length === 0) return
  if (pattern[0] === '**') {
    remainders(pattern.slice(1), rest, out)
    remainders(pattern, rest.slice(1), out)
    return
  }
  if (componentMatches(pattern[0], rest[0])) remainders(pattern.slice(1), rest.slice(1), out)
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
  const out = new Set<string>()
  remainders(rule.split('/'), rest, out)
  return [...out].map(r => wrap(`/${r}`))
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
  const file = path.join(os.tmpdir(), `workspace-mcp-ignore-${randomUUID()}`)
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o600 })
  return { args: ['--ignore-file', file], dispose: () => rm(file, { force: true }) }
}
