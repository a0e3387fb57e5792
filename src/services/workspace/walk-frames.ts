import { admitEntry, mergeSkipped, type Skipped, type WalkEntry, type WalkResult } from './walk.js'

/**
 * One folder as a walk thread read it: its children as the walk shows them and what it left out, with the folders
 * it read below (by child index); or why it could not be listed; or that the walk stopped there; or, in a walk split
 * over the walk threads, the unit read apart (see WalkUnit). A walk's answer is put together from its frames in
 * pre-order, with its entry cap, by emitFrames — on the thread for a whole walk, on the caller's for a split one.
 */
export type Frame = FolderFrame | { unit: number }

/** A frame of a folder read (not a unit's place). */
export type FolderFrame =
  | { children: WalkEntry[], skipped: Skipped, sub: Record<number, Frame> }
  | { unreadable: string }
  | { stopped: string }

/** A folder as a walk part names it to another thread: its name as its folder holds it, and its display facts. */
export interface UnitFolder {
  held: string | Uint8Array
  name: string
  relative: string
  fsPath: string | Uint8Array
}

/** A folder two levels below the start of a split walk, and its parent: read whole by whichever thread claims it. */
export interface WalkUnit {
  parent: UnitFolder
  folder: UnitFolder
}

/**
 * A part of a walk split over the walk threads: the top (the start folder and its child folders, with a unit in
 * place of each folder below them), or the units, each claimed from the shared counter `claim` by one thread.
 */
export type WalkPart = { top: true } | { units: WalkUnit[], claim: SharedArrayBuffer }

/** What a walk part answers: the top's frame and units, or the frames of the units this thread claimed. */
export interface WalkPieces {
  frame?: Frame
  units?: WalkUnit[]
  frames?: Record<number, FolderFrame>
}

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
