import { randomUUID } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

/** Rule files ripgrep reads in every directory (later wins). */
const RULE_FILES = ['.gitignore', '.ignore']

/**
 * Rewrites one gitignore line found in `dir` (relative to the root) so that, matched relative to the root,
 * it selects the same paths: an unanchored name may sit at any depth below `dir`, an anchored one right in it.
 */
export function rebaseRule (line: string, dir: string): string | undefined {
  let rule = line.replace(/(?<!\\)\s+$/, '')
  if (rule === '' || rule.startsWith('#')) return undefined
  const negated = rule.startsWith('!')
  if (negated) rule = rule.slice(1)
  const dirOnly = rule.endsWith('/')
  if (dirOnly) rule = rule.slice(0, -1)
  if (rule === '') return undefined
  const anchored = rule.includes('/')
  if (rule.startsWith('/')) rule = rule.slice(1)
  const prefix = dir === '.' ? '' : `${dir}/`
  const rebased = anchored ? `/${prefix}${rule}` : dir === '.' ? rule : `/${prefix}**/${rule}`
  return `${negated ? '!' : ''}${rebased}${dirOnly ? '/' : ''}`
}

/** A temporary ignore file for ripgrep, removed by `dispose`. */
export interface AncestorRules {
  /** Extra ripgrep arguments (`--ignore-file <tmp>`), empty when no ancestor has rules. */
  args: string[]
  dispose(): Promise<void>
}

/**
 * ripgrep reads ignore files of every parent of its search path, up to `/` — including files above the
 * workspace root, which must not apply. So searches run with `--no-ignore-parent`, and the rules of the
 * directories between the root and a sub-folder target are handed over explicitly, rebased to the root.
 */
export async function ancestorRules (root: string, target: string): Promise<AncestorRules> {
  const none: AncestorRules = { args: [], dispose: async () => {} }
  if (target === '.') return none
  const parts = target.split('/')
  const lines: string[] = []
  for (let depth = 0; depth < parts.length; depth++) {
    const dir = depth === 0 ? '.' : parts.slice(0, depth).join('/')
    for (const name of RULE_FILES) {
      const text = await readFile(path.join(root, dir, name), 'utf8').catch(() => '')
      for (const line of text.split('\n')) {
        const rule = rebaseRule(line, dir)
        if (rule !== undefined) lines.push(rule)
      }
    }
  }
  if (lines.length === 0) return none
  const file = path.join(os.tmpdir(), `workspace-mcp-ignore-${randomUUID()}`)
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o600 })
  return { args: ['--ignore-file', file], dispose: () => rm(file, { force: true }) }
}
