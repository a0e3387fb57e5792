/** A question set's tree as bench/retrieval/*.json names it. */
export interface TreeSet {
  tree: string
  folders: string[]
  exclude?: string[]
  locked?: Record<string, string>
}

export const SOURCES: Record<string, string>
export function missingTree (set: TreeSet): string | undefined
export function versionNote (set: TreeSet): string | undefined
export function copyTree (set: TreeSet, tree: string, source?: string): void
