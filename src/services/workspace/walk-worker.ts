import pino from 'pino'
import { serveAs } from '../threads/index.js'
import { syncFs } from './fs-ops.js'
import { asBuffer, stopReader } from './walk-thread.js'
import { createWorkspace } from './workspace.js'
import type { WorkspaceService } from './types.js'
import type { WalkAnswer, WalkRequest } from './walk-types.js'

/**
 * A walk thread's handler: each root's jail made once (over the synchronous calls: this thread serves no
 * requests), walking descriptor-relative (folder-walk.ts). The start folder's failure is answered by its fs
 * code, which the caller turns into its tool error.
 */
export function walkHandler (): (request: WalkRequest) => Promise<WalkAnswer> {
  const log = pino({ level: 'silent' })
  const workspaces = new Map<string, Promise<WorkspaceService>>()
  return async ({ root, options, stop }) => {
    const key = JSON.stringify(root)
    let made = workspaces.get(key)
    if (made === undefined) {
      made = createWorkspace({ root: root.path, name: root.name, prefixed: root.prefixed, log, listing: syncFs, walkHere: true })
      workspaces.set(key, made)
      // A root that cannot be opened now may be there later.
      made.catch(() => workspaces.delete(key))
    }
    const workspace = await made
    try {
      const result = await workspace.walk({ ...options, start: { ...options.start, fsPath: asBuffer(options.start.fsPath) }, stopped: stopReader(stop) })
      return { result }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      // An fs code (ESCAPED is the jail's own); anything else, a tool error among them, is the request's error.
      if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return { failed: code }
      throw err
    }
  }
}

serveAs('walk-worker', walkHandler)
