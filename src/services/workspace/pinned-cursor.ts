import { constants as fsc } from 'node:fs'
import type { Cursor } from './beneath.js'
import { byteString, fsPathOf } from './path-names.js'
import type { FsOps, Handle } from './entry-types.js'

/** A folder opened to walk into: never through a link (the walk judges links by their text first). */
const FOLDER_FLAGS = fsc.O_RDONLY | fsc.O_DIRECTORY | fsc.O_NOFOLLOW

/** A cursor that holds open every folder it stands in, from the root down (see `pinnedCursor`). */
export interface PinnedCursor<H extends Handle = Handle> extends Cursor {
  /** `/proc/self/fd/N/name`: `name` in the folder it stands in, reached through that folder's descriptor; without a name, the folder. */
  at(name?: string): string | Buffer
  /** The folder it stands in, open. */
  readonly folder: H
  /** Closes every folder it holds. */
  close(): Promise<void>
}

const procPath = (handle: Handle): string => `/proc/self/fd/${handle.fd}`

/**
 * A walk cursor over descriptors: the root is opened, each folder entered is opened through its parent's
 * descriptor (`/proc/self/fd/N/name`, no-follow), and every name is looked up in a folder already open. Swapping
 * a folder on the way for a link to the outside changes nothing for a walk already inside it: the descriptor
 * still names the same folder, so no lookup ever leaves the root. Undefined where /proc/self/fd does not name
 * the root (no /proc): the caller walks by path and verifies what it opens instead.
 */
export async function pinnedCursor<H extends Handle> (rootBytes: string, fs: FsOps<H>): Promise<PinnedCursor<H> | undefined> {
  let root: H
  try {
    root = await fs.open(fsPathOf(rootBytes), FOLDER_FLAGS)
  } catch {
    // The root itself cannot be opened (gone, or not readable): the path walk reports what is wrong.
    return undefined
  }
  const real = await fs.readlinkBytes(procPath(root)).then(byteString, () => undefined)
  if (real !== rootBytes) {
    await root.close()
    return undefined
  }
  const folders: H[] = []
  const top = (): H => folders.at(-1) ?? root
  const at = (name?: string): string | Buffer => name === undefined ? procPath(top()) : fsPathOf(`${procPath(top())}/${name}`)
  const closeFolders = async (): Promise<void> => {
    for (const folder of folders.splice(0)) await folder.close()
  }
  return {
    lstat: async (name) => await fs.lstat(at(name)),
    readlink: async (name) => await fs.readlinkBytes(at(name)),
    enter: async (name) => { folders.push(await fs.open(at(name), FOLDER_FLAGS)) },
    // The walk leaves only a folder it entered (it stops at the root with 'escapes').
    leave: async () => { await (folders.pop() as H).close() },
    toRoot: closeFolders,
    here: async () => await top().stat(),
    at,
    get folder () { return top() },
    async close () {
      await closeFolders()
      await root.close()
    }
  }
}
