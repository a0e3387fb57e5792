import { admitEntry, mergeSkipped } from './walk.js'
import type { FolderFrame, Frame, WalkEntry, WalkResult } from './walk-types.js'

/** A unit no part answered: only a stop leaves one (every unit before it was claimed, and the stopped one answered). */
const UNANSWERED: FolderFrame = { stopped: 'aborted' }

/** Puts a walk's answer together from its frames: pre-order, at most `maxEntries` entries (folders counted when not shown). */
export function emitFrames (top: Frame, units: Record<number, FolderFrame>, opts: { maxEntries: number, showDirs?: boolean }, result: WalkResult): void {
  let taken = 0
  const visit = (at: Frame, relative: string, self: WalkEntry | undefined): void => {
    const frame = 'unit' in at ? units[at.unit] ?? UNANSWERED : at
    if ('stopped' in frame) {
      if (!result.truncated) result.notes.push(`stopped early (${frame.stopped}); results are partial`)
      result.truncated = true
      return
    }
    if ('unreadable' in frame) {
      result.notes.push(`${relative}/: ${frame.unreadable}; its entries are not listed`)
      if (self !== undefined) self.unreadable = frame.unreadable
      return
    }
    const { children, skipped, sub } = frame
    mergeSkipped(result, skipped)
    for (let i = 0; i < children.length; i++) {
      const child = children[i]
      if (!admitEntry(result, child, taken++, opts)) return
      const below = sub[i]
      if (below !== undefined) visit(below, child.relative, child)
      if (result.truncated) return
    }
  }
  visit(top, '', undefined)
}
