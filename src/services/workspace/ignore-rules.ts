import ignore, { type Ignore } from 'ignore'
import { screenOf } from './ignore-screen.js'

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
  /** A listing of `dir` found no rule file there: its rules are none, with no attempt to open them. */
  noRuleFilesIn(dir: string): void
  /** The rule sets that apply to the entries of `dir` (its ancestors' and its own), each with the path from its folder down. */
  levelsFor(dir: string): Promise<readonly RuleLevel[]>
}

/** One folder's rule set, as it applies below one folder: `below` is the path from `dir` down to it (`a/b/`, or ''). */
export interface RuleLevel {
  rules: Ignore
  dir: string
  below: string
  /** No segment of `below` passes the set's screen (see ignore-screen.ts); worked out on first use when unset. */
  clean?: boolean
}

/** Each rule set parseRules made, with its screen (one that passes every segment when the set is not screenable). */
const screens = new WeakMap<Ignore, RegExp>()
const UNSCREENED = /(?:)/

/** One folder's rule files, read by whoever listed it, in IGNORE_FILES order (a missing one left out). */
export interface RuleText {
  file: string
  text: string
}

/** Parses a folder's rule files, each line marked with where it is written; null when there are none. */
export function parseRules (dir: string, files: readonly RuleText[]): Ignore | null {
  let rules: Ignore | null = null
  const lines: string[] = []
  for (const { file, text } of files) {
    rules ??= ignore({ allowRelativePaths: true })
    // One pattern per line, marked with where it is written, so a verdict can name its rule.
    const source = dir === '.' ? file : `${dir}/${file}`
    const patterns = text.split('\n').map(line => line.replace(/\r$/, ''))
    lines.push(...patterns)
    rules.add(patterns.map((pattern, i) => ({ pattern, mark: `${source}:${i + 1}` })))
  }
  if (rules !== null) screens.set(rules, screenOf(lines) ?? UNSCREENED)
  return rules
}

/** True when no rule of the level can decide `name` (a segment): its screen passes neither it nor any segment above. */
function screenedOut (level: RuleLevel, name: string): boolean {
  // Every level's rules come from parseRules.
  const screen = screens.get(level.rules) as RegExp
  level.clean ??= level.below.split('/').every(segment => segment === '' || !screen.test(segment))
  return level.clean && !screen.test(name)
}

/** The level as it applies one folder further down, in `name` (its screen's verdict carried down when known). */
export function levelBelow (level: RuleLevel, name: string): RuleLevel {
  const next: RuleLevel = { rules: level.rules, dir: level.dir, below: `${level.below}${name}/` }
  if (level.clean !== undefined) next.clean = level.clean && !(screens.get(level.rules) as RegExp).test(name)
  return next
}

/**
 * The verdict for one entry of the folder the levels apply to, without touching the disk: the rules of every
 * level, deepest last, and the last decisive rule wins (and is returned). `.git/` is always ignored.
 */
export function decide (levels: readonly RuleLevel[], name: string, isDirectory: boolean): IgnoreMatch | undefined {
  if (name === '.git' && isDirectory) return { where: 'built-in', pattern: '.git/' }
  const leaf = isDirectory ? `${name}/` : name
  let decided: IgnoreMatch | undefined
  for (const level of levels) {
    if (screenedOut(level, name)) continue
    const { rules, dir, below } = level
    const result = rules.test(below + leaf)
    // `ignore` returns the deciding rule with every ignored verdict; its type leaves it optional.
    /* c8 ignore next */
    if (result.ignored) decided = { where: result.rule?.mark ?? dir, pattern: result.rule?.pattern ?? '' }
    else if (result.unignored) decided = undefined
  }
  return decided
}

/** Reads one rule file of a folder (relative to the root) through the workspace jail; undefined when absent. */
export type RuleFileReader = (dirRelative: string, name: string) => Promise<string | undefined>

/** Rules that apply below one folder: each rule set with the path from its folder down to that one. */
interface Chain {
  levels: RuleLevel[]
  /** When the first of its rule sets expires. */
  expires: number
}

/** Creates the rule reader; every rule file is read through `read` (the workspace's verified open). */
export function createIgnoreRules (read: RuleFileReader, now: () => number = Date.now): IgnoreRules {
  const cache = new Map<string, CachedRules>()
  // Walks ask about every entry of a folder: the folder's chain of rule sets is put together once.
  const chains = new Map<string, Chain>()

  async function rulesFor (dir: string): Promise<CachedRules> {
    const hit = cache.get(dir)
    if (hit !== undefined && now() - hit.loadedAt < RULES_TTL_MS) return hit
    const files: RuleText[] = []
    for (const file of IGNORE_FILES) {
      // A missing or unreadable rule file means "no rules here", exactly as git and ripgrep treat it.
      const text = await read(dir, file)
      if (text !== undefined) files.push({ file, text })
    }
    return remember(dir, parseRules(dir, files))
  }

  function remember (dir: string, rules: Ignore | null): CachedRules {
    if (cache.size > 10_000) cache.clear()
    if (chains.size > 10_000) chains.clear()
    const entry = { rules, loadedAt: now() }
    cache.set(dir, entry)
    return entry
  }

  async function chainFor (parent: string): Promise<Chain> {
    const hit = chains.get(parent)
    if (hit !== undefined && now() < hit.expires) return hit
    const parts = parent === '.' || parent === '' ? [] : parent.split('/')
    const chain: Chain = { levels: [], expires: Infinity }
    for (let level = 0; level <= parts.length; level++) {
      const dir = level === 0 ? '.' : parts.slice(0, level).join('/')
      const { rules, loadedAt } = await rulesFor(dir)
      chain.expires = Math.min(chain.expires, loadedAt + RULES_TTL_MS)
      if (rules !== null) chain.levels.push({ rules, dir, below: parts.slice(level).map(p => `${p}/`).join('') })
    }
    chains.set(parent, chain)
    return chain
  }

  /** Applies the rules of `dir` and every ancestor, deepest last: the last decisive rule wins (and is returned). */
  async function verdict (parent: string, name: string, isDirectory: boolean): Promise<IgnoreMatch | undefined> {
    if (name === '.git' && isDirectory) return decide([], name, isDirectory)
    return decide((await chainFor(parent)).levels, name, isDirectory)
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
    explain,
    levelsFor: async (dir) => (await chainFor(dir)).levels,
    noRuleFilesIn (dir) {
      const hit = cache.get(dir)
      if (hit === undefined || now() - hit.loadedAt >= RULES_TTL_MS) remember(dir, null)
    }
  }
}
