import ignore, { type Ignore } from 'ignore'

/** Names of the rule files read in every directory, in precedence order (later wins, as in ripgrep). */
export const IGNORE_FILES = ['.gitignore', '.ignore'] as const

/** How long a directory's parsed rules are reused before the files are read again. */
const RULES_TTL_MS = 2000

interface CachedRules {
  rules: Ignore | null
  loadedAt: number
}

/** .gitignore/.ignore rules of a tree, nested files honoured, `.git/` always ignored. */
export interface IgnoreRules {
  /** True when `relative` (POSIX, relative to the root) is ignored, checking every ancestor directory too. */
  isIgnored(relative: string, isDirectory: boolean): Promise<boolean>
  /** The verdict for one entry whose parent directory is already known not to be ignored (walks use this). */
  isIgnoredEntry(parentRelative: string, name: string, isDirectory: boolean): Promise<boolean>
}

/** Reads one rule file of a folder (relative to the root) through the workspace jail; undefined when absent. */
export type RuleFileReader = (dirRelative: string, name: string) => Promise<string | undefined>

/** Creates the rule reader; every rule file is read through `read` (the workspace's verified open). */
export function createIgnoreRules (read: RuleFileReader, now: () => number = Date.now): IgnoreRules {
  const cache = new Map<string, CachedRules>()

  async function rulesFor (dir: string): Promise<Ignore | null> {
    const hit = cache.get(dir)
    if (hit !== undefined && now() - hit.loadedAt < RULES_TTL_MS) return hit.rules
    let rules: Ignore | null = null
    for (const file of IGNORE_FILES) {
      // A missing or unreadable rule file means "no rules here", exactly as git and ripgrep treat it.
      const text = await read(dir, file)
      if (text === undefined) continue
      rules ??= ignore({ allowRelativePaths: true })
      rules.add(text)
    }
    if (cache.size > 10_000) cache.clear()
    cache.set(dir, { rules, loadedAt: now() })
    return rules
  }

  /** Applies the rules of `dir` and every ancestor, deepest last: the last decisive rule wins. */
  async function verdict (parent: string, name: string, isDirectory: boolean): Promise<boolean> {
    if (name === '.git' && isDirectory) return true
    const parts = parent === '.' || parent === '' ? [] : parent.split('/')
    let ignored = false
    for (let level = 0; level <= parts.length; level++) {
      const dir = level === 0 ? '.' : parts.slice(0, level).join('/')
      const rules = await rulesFor(dir)
      if (rules === null) continue
      const rel = [...parts.slice(level), name].join('/') + (isDirectory ? '/' : '')
      const result = rules.test(rel)
      if (result.ignored) ignored = true
      else if (result.unignored) ignored = false
    }
    return ignored
  }

  return {
    async isIgnored (relative, isDirectory) {
      if (relative === '.' || relative === '') return false
      const parts = relative.split('/')
      // git cannot re-include a file whose parent directory is excluded, so any ignored ancestor decides.
      for (let i = 1; i < parts.length; i++) {
        if (await verdict(parts.slice(0, i - 1).join('/') || '.', parts[i - 1], true)) return true
      }
      return verdict(parts.slice(0, -1).join('/') || '.', parts[parts.length - 1], isDirectory)
    },
    isIgnoredEntry: verdict
  }
}
