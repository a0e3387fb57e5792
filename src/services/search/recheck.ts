import type { WorkspaceService } from '../workspace/index.js'
import type { Dropped } from './set.js'

/**
 * Re-checks files about to be shown: each must still resolve, through the jail, to itself inside the root,
 * and open (no-follow, descriptor checked inside the root) as a regular file that the workspace's hard-link
 * policy allows. ripgrep opens the files below its pinned folder by name, so a sub-folder swapped for a link
 * while it ran could have fed it outside files under inside names; those no longer open inside and are
 * dropped. Only the page's files are looked at. Returns the files to drop, with why.
 */
export async function recheckFiles (workspace: WorkspaceService, paths: string[], signal?: AbortSignal): Promise<Map<string, keyof Dropped>> {
  const verdicts = new Map<string, keyof Dropped>()
  await Promise.all([...new Set(paths)].map(async (shown) => {
    const why = await verdictOf(workspace, shown, signal)
    if (why !== undefined) verdicts.set(shown, why)
  }))
  return verdicts
}

async function verdictOf (workspace: WorkspaceService, shown: string, signal?: AbortSignal): Promise<keyof Dropped | undefined> {
  try {
    // mustExist false: a vanished file fails the open below, without a did-you-mean scan.
    const resolved = await workspace.resolve(shown, { field: 'path', mustExist: false, signal })
    if (resolved.relative !== shown) return 'moved'
    // Opened, not stat'ed by name: a parent swapped for a link between the resolve and a stat would be followed.
    const pinned = await workspace.pin(resolved)
    await pinned.close()
    return pinned.isDirectory ? 'moved' : undefined
  } catch (err) {
    return (err as { toolCode?: string }).toolCode === 'HARD_LINK_REFUSED' ? 'hardLinked' : 'moved'
  }
}
