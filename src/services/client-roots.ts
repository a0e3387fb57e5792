import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from '../base/logger.js'
import type { GitService } from './git/index.js'
import type { Services } from './index.js'
import { createWorkspace, createWorkspaceSet, isOutside } from './workspace/index.js'

/** Options of narrowServices. */
export interface NarrowOptions {
  log: Logger
  allowHardLinks: boolean
}

/** A folder a session may see: a whole served root, or a folder inside one. */
interface Kept {
  name: string
  /** Real absolute path. */
  path: string
  /** The whole served root, not a folder inside it. */
  whole: boolean
  /** Its repository, or why it has none. */
  git: GitService | string
}

const INSIDE_ONLY = 'a client root narrowed this root to a folder inside it, and its history is the whole repository\'s'

/** Client roots looked at; the rest are ignored (each folder inside a served root costs a jailed resolve and a workspace). */
export const MAX_CLIENT_ROOTS = 64

/** The absolute paths of a client's `file://` roots; other schemes name nothing on this machine. */
function clientPaths (uris: readonly unknown[]): string[] {
  const paths: string[] = []
  for (const uri of uris.slice(0, MAX_CLIENT_ROOTS)) {
    if (typeof uri !== 'string' || !uri.startsWith('file://')) continue
    try {
      paths.push(path.resolve(fileURLToPath(uri)))
    } catch {}
  }
  return paths
}

/**
 * What a session's client roots (MCP `roots/list`) leave of the served workspace: a served root inside a client
 * root stays whole; a client root inside a served root narrows it to that folder, resolved through the root's
 * own jail (a link out is not followed, a missing folder is skipped). Client paths are compared as text and
 * never looked up outside the served roots. Roots only narrow: when none of them meets a served root (a remote
 * client's folders are on another machine), or they keep everything, the answer is undefined — serve as configured.
 */
export async function narrowServices (base: Services & Required<Pick<Services, 'workspace' | 'limiter'>>, uris: readonly unknown[], opts: NarrowOptions): Promise<Services | undefined> {
  const wanted = clientPaths(uris)
  const members = base.workspace.parts(await base.workspace.resolve('.')).map(p => p.workspace)
  const kept: Kept[] = []
  for (const member of members) {
    const { name, path: root } = member.roots[0]
    if (wanted.some(c => !isOutside(path.relative(c, root)))) {
      kept.push({ name, path: root, whole: true, git: base.git?.of(name) ?? 'git history is not served' })
      continue
    }
    for (const inner of wanted.filter(c => !isOutside(path.relative(root, c)))) {
      const folder = await member.resolve(inner).catch(() => undefined)
      if (folder === undefined || typeof folder.fsPath !== 'string' || !(await member.stat(folder)).isDirectory()) continue
      kept.push({ name, path: folder.fsPath, whole: false, git: INSIDE_ONLY })
    }
  }
  if (kept.length === 0 || (kept.length === members.length && kept.every(k => k.whole))) return undefined

  const taken = new Set<string>()
  const named = kept.map(k => {
    let name = k.name
    for (let n = 2; taken.has(name); n++) name = `${k.name}-${n}`
    taken.add(name)
    return { ...k, name }
  })
  opts.log.info({ roots: named.map(k => k.name) }, 'client roots narrow this session\'s workspace')
  const { limiter } = base
  const workspaces = await Promise.all(named.map(async k => await createWorkspace({
    root: k.path, name: k.name, prefixed: named.length > 1, log: opts.log, limiter, pdf: base.workspace.pdf, allowHardLinks: opts.allowHardLinks
  })))
  const workspace = createWorkspaceSet(workspaces, limiter)
  const narrowed: Services = { ...base, workspace, search: base.search?.over(workspace) }
  if (base.git !== undefined) {
    const byName = new Map(named.map(k => [k.name, k.git]))
    // lexical() names only this session's roots, so every name asked for is in the map.
    narrowed.git = { of: (root) => byName.get(root) as GitService | string, names: named.filter(k => typeof k.git !== 'string').map(k => k.name) }
  }
  return narrowed
}
