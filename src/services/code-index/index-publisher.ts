import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '../../base/logger.js'
import type { TreeSitterLocation } from '../symbols/index.js'
import type { WorkspaceService } from '../workspace/index.js'
import { createCodeIndex, type CodeIndexStatus } from './code-index.js'
import { removeIndexFile } from './index-file.js'
import { acquireLease, type LeaseHolder } from './index-lease.js'
import { publishIndex, stageIndex } from './index-publish.js'
import type { Sqlite } from './index-schema.js'

/** What buildAndPublish needs. */
export interface PublishOptions {
  workspace: WorkspaceService
  /** Where tree-sitter is, and how many parser threads the build runs. */
  treeSitter: TreeSitterLocation
  threads: number
  sqlite: Sqlite
  /** The published index file (replicas read it with codeIndex `shared`). */
  published: string
  log: Logger
  /** Largest size of the index file, in bytes. */
  maxBytes?: number
  /** How long to wait for another build holding the lease. */
  waitMs: number
  /** Told how the build goes, every `everyMs` (default 2 s). */
  progress?: (status: CodeIndexStatus) => void
  everyMs?: number
}

/** How a build ended: published (with the index's counts), the lease held by another past the wait, or failed. */
export type PublishOutcome =
  | { outcome: 'published', status: CodeIndexStatus, ms: number }
  | { outcome: 'busy', holder: LeaseHolder }
  | { outcome: 'failed', status: CodeIndexStatus }

/**
 * Builds the index of the workspace and publishes it for readers (`workspace-mcp index`): takes the file's lease
 * (waiting for another build), copies the current generation to a staging file beside it, refreshes that with a
 * scan (only changed files are parsed), seals it (no log beside it) and renames it into place. Readers never see
 * a half-written index, and one build at a time runs, across hosts sharing the folder.
 */
export async function buildAndPublish (options: PublishOptions): Promise<PublishOutcome> {
  const { published, log, everyMs = 2000 } = options
  const began = Date.now()
  let lease = acquireLease(published)
  while ('heldBy' in lease) {
    if (Date.now() - began >= options.waitMs) return { outcome: 'busy', holder: lease.heldBy }
    await sleep(Math.min(1000, Math.max(1, options.waitMs - (Date.now() - began))))
    lease = acquireLease(published)
  }
  const staging = stageIndex(options.sqlite, published)
  const index = createCodeIndex({ workspace: options.workspace, treeSitter: options.treeSitter, threads: options.threads, sqlite: options.sqlite, file: staging, log, lease: false, journal: 'delete', ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }) })
  const timer = setInterval(() => options.progress?.(index.status()), everyMs)
  try {
    // The copied generation says it is complete: what counts is that this build's own scan finished.
    index.start()
    let status = index.status()
    while (status.lastScan === undefined && status.error === undefined && status.problem === undefined) {
      await sleep(100)
      status = index.status()
    }
    if (status.lastScan === undefined) return { outcome: 'failed', status }
    // Written with a rollback journal: whole as it stands once closed (publishIndex syncs it before the rename).
    await index.close()
    publishIndex(staging, published)
    return { outcome: 'published', status, ms: Date.now() - began }
  } finally {
    clearInterval(timer)
    await index.close()
    removeIndexFile(staging)
    lease.release()
  }
}
