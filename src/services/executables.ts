import { constants } from 'node:fs'
import { access, realpath } from 'node:fs/promises'
import path from 'node:path'

const within = (file: string, dir: string): boolean => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep)

/**
 * The first executable `name` on PATH, found only where the workspace cannot have put it: relative PATH entries
 * (`.` is wherever the server was started, perhaps a served folder) are skipped, and so is any entry — or any
 * candidate, once its links are followed — inside a served root. One lookup for every program the server runs
 * (ripgrep, git).
 */
export async function findExecutable (name: string, roots: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const served = await Promise.all(roots.map(async root => await realpath(root).catch(() => path.resolve(root))))
  const inside = (file: string): boolean => served.some(root => within(file, root))
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue
    const candidate = path.join(dir, name)
    const real = await realpath(candidate).catch(() => undefined)
    if (real === undefined || inside(real) || inside(await realpath(dir).catch(() => dir))) continue
    if (await access(real, constants.X_OK).then(() => true, () => false)) return candidate
  }
  return undefined
}
