import type { IgnoredExample, WorkspaceService } from '../services/workspace/index.js'

/**
 * Names what the ignore rules left out: an example, the rule that decides it (file:line and pattern)
 * and the exact call that includes it, so an agent is never left with a near-empty answer and no
 * reason (an unpacked tarball's `.gitignore` may end with `/*`).
 */
export async function ignoredNotice (workspace: WorkspaceService, example: IgnoredExample | undefined, what: string, call: string): Promise<string | undefined> {
  if (example === undefined) return undefined
  const rule = await workspace.explainIgnored(example.relative, example.isDirectory)
  const shown = `${example.relative}${example.isDirectory ? '/' : ''}`
  // The walk and explain read the same rules, so an entry the walk found ignored has a rule; a guard.
  /* c8 ignore next */
  const by = rule === undefined ? '' : `, by ${rule.where} ${JSON.stringify(rule.pattern)}`
  return `${what} (e.g. ${shown}${by}) — to include them: ${call}`
}
