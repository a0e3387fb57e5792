import type { WorkspaceService } from '../services/workspace/index.js'
import { compareText } from '../services/compare-text.js'

/** Most values one completion returns (the spec caps a response at 100). */
const MAX_VALUES = 100

/**
 * Workspace paths that continue `value` (`docs/de` → `docs/design/`, `docs/deploy.md`): the entries of the
 * folder it names whose names start with its last segment, read through the root jail. Hidden entries
 * only when the segment starts with a dot; ignored ones never. A folder outside the root, missing or
 * unreadable completes to nothing, the same answer either way.
 */
export async function completePaths (workspace: WorkspaceService, value: string, signal?: AbortSignal): Promise<string[]> {
  // Paths are relative to the root: an absolute one completes to nothing, like any outside path.
  if (value.startsWith('/')) return []
  // With several roots, `docs:gu` continues in the root docs as `gu` would at the top of one root.
  const root = workspace.roots.length > 1 ? /^[A-Za-z0-9][A-Za-z0-9._-]*:/.exec(value)?.[0] : undefined
  const cut = value.lastIndexOf('/')
  const folder = cut === -1 ? root ?? '.' : value.slice(0, cut)
  const prefix = value.slice(cut === -1 && root !== undefined ? root.length : cut + 1)
  const dir = await workspace.resolve(folder, { mustExist: false, signal }).catch(() => undefined)
  if (dir === undefined) return []
  const entries = await workspace.readDirectory(dir).catch(() => [])
  const shownFolder = cut === -1 ? root ?? '' : value.slice(0, cut + 1)
  const values: string[] = []
  for (const entry of entries.sort((a, b) => compareText(a.name, b.name))) {
    if (values.length >= MAX_VALUES || signal?.aborted === true) break
    if (!entry.name.startsWith(prefix) || (entry.name.startsWith('.') && !prefix.startsWith('.'))) continue
    if (await workspace.isIgnoredEntry(dir.relative, entry.name, entry.kind === 'dir')) continue
    values.push(`${shownFolder}${entry.name}${entry.kind === 'dir' ? '/' : ''}`)
  }
  return values
}
