import type { Logger } from '../logger.js'
import type { WorkspaceService } from './workspace.js'

/** ripgrep-backed search (placeholder: being built in issue #3). */
export interface SearchService {
  /** ripgrep version string. */
  version: string
}

/** Locates ripgrep. */
export async function createSearch (_opts: { workspace: WorkspaceService, log: Logger }): Promise<SearchService> {
  return { version: 'unknown' }
}
