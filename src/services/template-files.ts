import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../base/logger.js'
import { compareText } from './compare-text.js'
import type { WorkspaceService } from './workspace/index.js'

/** One template file's text, as the prompt loader parses it. */
export interface TemplateSource {
  /** Where it came from (logs only). */
  file: string
  source: string
}

/** Largest template read; a bigger one is skipped. */
const MAX_TEMPLATE_BYTES = 256 * 1024

/** The server's own bundles (a package folder, not the workspace): every `*.md`, by name. */
export function readPackageTemplates (dir: string): TemplateSource[] {
  try {
    if (!statSync(dir).isDirectory()) return []
    return readdirSync(dir).filter(n => n.endsWith('.md')).sort().map(n => ({ file: join(dir, n), source: readFileSync(join(dir, n), 'utf8') }))
  } catch {
    return []
  }
}

/**
 * The workspace's bundles, read through the jail like any tool read: a template that is a link out of
 * the root, a FIFO or a hard link is skipped (and logged), never served.
 */
export async function readWorkspaceTemplates (workspace: WorkspaceService, relativeDir: string, log: Logger): Promise<TemplateSource[]> {
  let dir
  try {
    // An absent folder is the usual case: no did-you-mean scan of the root for it (cold start).
    dir = await workspace.resolve(relativeDir, { field: 'templatesDir', mustExist: false })
    if (!(await workspace.stat(dir)).isDirectory()) return []
  } catch {
    return []
  }
  const entries = await workspace.readDirectory(dir).catch((err: unknown) => {
    // A folder that is there but cannot be listed (permissions, swapped for a link meanwhile) serves no bundle: said why.
    log.warn({ err, dir: relativeDir }, 'templates folder not listed: no workspace template bundles')
    return []
  })
  const out: TemplateSource[] = []
  for (const entry of entries.filter(e => e.name.endsWith('.md')).sort((a, b) => compareText(a.name, b.name))) {
    const source = await workspace.readText(entry.relative, MAX_TEMPLATE_BYTES)
    if (source === undefined) log.warn({ file: entry.relative }, 'template bundle skipped: not a readable regular file inside the workspace')
    else out.push({ file: entry.relative, source })
  }
  return out
}
