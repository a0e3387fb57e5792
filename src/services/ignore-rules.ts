import ignore, { type Ignore } from 'ignore'

/** Names of the rule files read in every directory, in precedence order (later wins, as in ripgrep). */
export const IGNORE_FILES = ['.gitignore', '.ignore'] as const

/** How long a directory's parsed rules are reused before the files are read again. */
const RULES_TTL_MS = 2000

interface CachedRules {
  rules: Ignore | null
  loadedAt: number
}

/** The rule that hides a path: where it is written (`src/.gitignore:12`, or `built-in` for `.git/`) and its text. */
export interface IgnoreMatch {
  where: string
  pattern: string
}

/** .gitignore/.ignore rules of a tree, nested files honoured, `.git/` always ignored. */
export interface IgnoreRules {
  /** True when `relative` (POSIX, relative to the root) is ignored, checking every ancestor directory too. */
  isIgnored(relative: string, isDirectory: boolean): Promise<boolean>
  /** The verdict for one entry whose parent directory is already known not to be ignored (walks use this). */
  isIgnoredEntry(parentRelative: string, name: string, isDirectory: boolean): Promise<boolean>
  /** The rule that hides `relative` (itself or through an ignored ancestor folder), as `git check-ignore -v` names it; undefined when not ignored. */
  explain(relative: string, isDirectory: boolean): Promise<IgnoreMatch | undefined>
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
      // One pattern per line, marked with where it is written, so a verdict can name its rule.
      const source = dir === '.' ? file : `${dir}/${file}`
      rules.add(text.split('\n').map((line, i) => ({ pattern: line.replace(/\r$/, ''), mark: `${source}:${i + 1}` })))
    }
    if (cache.size > 10_000) cache.clear()
    cache.set(dir, { rules, loadedAt: now() })
    return rules
  }

  /** Applies the rules of `dir` and every ancestor, deepest last: the last decisive rule wins (and is returned). */
  async function verdict (parent: string, name: string, isDirectory: boolean): Promise<IgnoreMatch | undefined> {
    if (name === '.git' && isDirectory) return { where: 'built-in', pattern: '.git/' }
    const parts = parent === '.' || parent === '' ? [] : parent.split('/')
    let decided: IgnoreMatch | undefined
    for (let level = 0; level <= parts.length; level++) {
      const dir = level === 0 ? '.' : parts.slice(0, level).join('/')
      const rules = await rulesFor(dir)
      if (rules === null) continue
      const rel = [...parts.slice(level), name].join('/') + (isDirectory ? '/' : '')
      const result = rules.test(rel)
      // `ignore` returns the deciding rule with every ignored verdict; its type leaves it optional.
      /* c8 ignore next */
      if (result.ignored) decided = { where: result.rule?.mark ?? dir, pattern: result.rule?.pattern ?? '' }
      else if (result.unignored) decided = undefined
    }
    return decided
  }

  /** The verdict for a whole path: git cannot re-include a file whose parent folder is excluded, so an ignored ancestor decides. */
  async function explain (relative: string, isDirectory: boolean): Promise<IgnoreMatch | undefined> {
    if (relative === '.' || relative === '') return undefined
    const parts = relative.split('/')
    for (let i = 1; i < parts.length; i++) {
      const ancestor = await verdict(parts.slice(0, i - 1).join('/') || '.', parts[i - 1], true)
      if (ancestor !== undefined) return ancestor
    }
    return verdict(parts.slice(0, -1).join('/') || '.', parts[parts.length - 1], isDirectory)
  }

  return {
    isIgnored: async (relative, isDirectory) => await explain(relative, isDirectory) !== undefined,
    isIgnoredEntry: async (parent, name, isDirectory) => await verdict(parent, name, isDirectory) !== undefined,
    explain
  }
}
