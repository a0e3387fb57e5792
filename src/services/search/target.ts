import { type PinnedPath, type ResolvedPath, type WorkspacePart, type WorkspaceService, byteString, fsPathOf, parseName } from '../workspace/index.js'
import { ancestorRules, type AncestorRules } from './ignore.js'

/** What one ripgrep run searches: a pinned inode, never a name ripgrep could be tricked into following out. */
export interface SearchTarget {
  /** The searched path relative to the root ('.' for the root), in its display form. */
  relative: string
  /** True when the target is a file (named in `path`), false for a folder. */
  named: boolean
  /** ripgrep's working directory: the pinned folder itself, or `/` for a pinned file. */
  cwd: string
  /** Arguments before `--` (the ancestors' ignore rules). */
  args: string[]
  /** The path operands that search the whole target. */
  paths: string[]
  /** Maps a path as ripgrep printed it (display form, `./` stripped) to the path relative to the root. */
  toRelative(shown: string): string
  /** The operand that makes ripgrep search one file of a result again, or undefined when it cannot be passed. */
  operand(relative: string): string | undefined
  /** Replacements for ripgrep's messages: the /proc path by the name the agent knows. */
  names: Array<[string, string]>
  close(): Promise<void>
}

/**
 * `--encoding` for a named file in a legacy charset (read_files' detection), so ripgrep matches and prints
 * its text as UTF-8; none for UTF-8 and UTF-16 (ripgrep reads a BOM itself) or a file the workspace will not open.
 */
async function encodingArgs (workspace: WorkspaceService, resolved: ResolvedPath): Promise<string[]> {
  let handle
  try {
    handle = await workspace.openFile(resolved, 'path')
  } catch {
    return []
  }
  try {
    const { charset } = await workspace.sniff(handle)
    return charset === undefined ? [] : ['--encoding', charset.toLowerCase()]
  } finally {
    await handle.close()
  }
}

/**
 * Pins a resolved file or folder (opened no-follow, checked inside the root) and describes the ripgrep run over
 * it: a folder becomes ripgrep's cwd through `/proc/<pid>/fd/<n>`, so swapping the folder (or one above it)
 * for a link while ripgrep runs changes nothing; a file is passed as its /proc path. Ancestor rules are
 * rebased onto the folder when `rules` is set (a whole-folder walk; runs over named files need none).
 */
export async function pinTarget (part: WorkspacePart, rules: boolean): Promise<SearchTarget> {
  const { workspace, resolved } = part
  const pinned: PinnedPath = await workspace.pin(resolved, 'path')
  const relative = resolved.relative
  if (!pinned.isDirectory) {
    return {
      relative,
      named: true,
      cwd: '/',
      args: await encodingArgs(workspace, resolved),
      paths: [pinned.procPath],
      toRelative: () => relative,
      operand: (file) => file === relative ? pinned.procPath : undefined,
      names: [[pinned.procPath, relative]],
      close: () => pinned.close()
    }
  }
  let ancestors: AncestorRules | undefined
  try {
    ancestors = rules ? await ancestorRules((file, max) => workspace.readText(file, max), part.path) : undefined
  } catch (err) {
    // A cancelled call or an unreadable rule file: the descriptor must not outlive the failed search.
    await pinned.close()
    throw err
  }
  const prefix = resolved.base
  return {
    relative,
    named: false,
    cwd: pinned.procPath,
    args: ancestors?.args ?? [],
    paths: ['.'],
    toRelative: (shown) => prefix + shown,
    operand: (file) => file.startsWith(prefix) ? operandOf(file.slice(prefix.length)) : undefined,
    names: [[pinned.procPath, relative]],
    async close () {
      await ancestors?.dispose()
      await pinned.close()
    }
  }
}

/** The spawn argument for a display path below the cwd; undefined for a name that is not UTF-8 (no string can carry it). */
function operandOf (shown: string): string | undefined {
  const fsPath = fsPathOf(byteString(parseName(shown)))
  return typeof fsPath === 'string' ? `./${fsPath}` : undefined
}
