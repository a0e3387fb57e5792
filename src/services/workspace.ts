import type { Logger } from '../logger.js'

/** The workspace root jail (placeholder: being built in issue #3). */
export interface WorkspaceService {
  /** Canonical absolute root. */
  root: string
}

/** Canonicalises the root. */
export async function createWorkspace (opts: { root: string, log: Logger }): Promise<WorkspaceService> {
  return { root: opts.root }
}
