// Synchronous on purpose: it runs once at boot before anything else, and the sync calls cost ~1 ms
// where the first promise-based ones (threadpool start-up) cost ~14 ms of the stdio cold start.
import { opendirSync, realpathSync, statSync, type Stats } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import path from 'node:path'
import { configEnvName, configFlagName, configLabel, configuredRoots, type Config } from './base/config.js'
import { APP_ERR_CONFIG_INVALID } from './base/errors.js'

/** How strict the boot check of the root is. */
export interface RootCheckOptions {
  /** Refuse a broad root (/, home, system folder) unless allowBroadRoot: the serving commands. */
  refuseBroad: boolean
  /** The raw flags, to tell an explicit root from the current-directory default. */
  flags?: Record<string, unknown>
  /** Environment (HOME, WORKSPACE_MCP_ROOT, Windows folders); default process.env. */
  env?: NodeJS.ProcessEnv
}

// Served folders that hand a client far more than a workspace. Only the folders themselves:
// a project under /opt or /srv is an ordinary root. Absent ones cost one failed realpath each.
const SYSTEM_FOLDERS = ['/etc', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/var', '/proc', '/sys', '/dev', '/boot', '/root', '/opt', '/srv', '/run', '/tmp']

const ROOT_LABEL = configLabel('root')
const OVERRIDE = `${configFlagName('allowBroadRoot')} (${configEnvName('allowBroadRoot')}=true)`

/** Words for the errno of a failed stat/open of the root; the code stays in brackets for searching. */
function describeFsError (err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT': return 'does not exist'
    case 'ENOTDIR': return 'does not exist (a part of the path is a file, not a folder)'
    case 'EACCES':
    case 'EPERM': return 'is not accessible to this process (permission denied)'
    case 'ELOOP': return 'is a loop of symbolic links'
    case 'ENAMETOOLONG': return 'is too long a path'
    default: return `cannot be opened (${String(err.code)})`
  }
}

function describeKind (st: Stats): string {
  if (st.isFile()) return 'a regular file'
  if (st.isSocket()) return 'a socket'
  if (st.isFIFO()) return 'a named pipe'
  // stat follows links, so a device is all that is left.
  return 'a device'
}

function realOrResolved (p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return path.resolve(p)
  }
}

/** The folders a root may not be without the override, as real paths, each with its label. */
function broadFolders (env: NodeJS.ProcessEnv): Array<{ real: string, label: string }> {
  const system = [...SYSTEM_FOLDERS, tmpdir()]
  for (const name of ['SystemRoot', 'windir', 'ProgramFiles', 'ProgramFiles(x86)', 'ProgramData']) {
    const value = env[name]
    if (value !== undefined && value !== '') system.push(value)
  }
  return system.map(p => ({ real: realOrResolved(p), label: `the system folder ${p}` }))
}

/**
 * Why serving this real path would expose more than a workspace, or undefined if it is an ordinary
 * folder. Broad: the file system root, the home directory or any folder containing it, a system folder.
 */
export function broadRootReason (realRoot: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (path.dirname(realRoot) === realRoot) return 'it is the file system root'
  const homes = [homedir(), env.HOME ?? ''].filter(h => h !== '')
  for (const home of homes) {
    const realHome = realOrResolved(home)
    if (realHome === realRoot) return `it is the home directory (${home})`
    if (realHome.startsWith(realRoot + path.sep)) return `it contains the home directory (${home})`
  }
  for (const folder of broadFolders(env)) {
    if (folder.real === realRoot) return `it is ${folder.label}`
  }
  return undefined
}

/**
 * Boot check of every configured root, before any service is created: each must be an existing folder this
 * process can list, and (for serving) not a broad one unless allowBroadRoot; no two may be the same folder.
 * Throws APP_ERR_CONFIG_INVALID (exit 2) naming the flag; returns the broad reasons when they were allowed.
 */
export function checkRoot (config: Pick<Config, 'root' | 'allowBroadRoot'> & Partial<Pick<Config, 'roots'>>, opts: RootCheckOptions): string | undefined {
  const env = opts.env ?? process.env
  const given = opts.flags?.root !== undefined || (env[configEnvName('root')] ?? '') !== '' || (env[configEnvName('roots')] ?? '') !== ''
  const roots = configuredRoots(config)
  const seen = new Map<string, string>()
  const reasons: string[] = []
  for (const root of roots) {
    const what = given ? root.path : `the current directory ${root.path} (no ${configFlagName('root')} given)`
    const checked = checkOne(root.path, what, config.allowBroadRoot, opts.refuseBroad, env)
    const twin = seen.get(checked.real)
    if (twin !== undefined) throw new APP_ERR_CONFIG_INVALID(`${ROOT_LABEL}: ${root.path} and ${twin} are the same folder; give it once`)
    seen.set(checked.real, root.path)
    if (checked.broad !== undefined) reasons.push(roots.length > 1 ? `${root.name}: ${checked.broad}` : checked.broad)
  }
  return reasons.length === 0 ? undefined : reasons.join('; ')
}

/** One root's check: its real path, and why it is broad when that was allowed. */
function checkOne (root: string, what: string, allowBroadRoot: boolean, refuseBroad: boolean, env: NodeJS.ProcessEnv): { real: string, broad?: string } {
  function fail (problem: string): never {
    throw new APP_ERR_CONFIG_INVALID(`${ROOT_LABEL}: ${what} ${problem}`)
  }

  let real: string
  let st: Stats
  try {
    real = realpathSync(root)
    st = statSync(real)
  } catch (err) {
    fail(describeFsError(err as NodeJS.ErrnoException))
  }
  if (!st.isDirectory()) fail(`is ${describeKind(st)}, not a folder. Pass the folder to serve.`)
  try {
    const dir = opendirSync(real)
    try { dir.readSync() } finally { dir.closeSync() }
    // Listing names is not enough: without search permission no entry can be opened. Looking up
    // `.` inside needs it, checked with the effective uid (access() would ask about the real one).
    statSync(real + path.sep + '.')
  } catch (err) {
    fail(`cannot be listed: it ${describeFsError(err as NodeJS.ErrnoException)}`)
  }

  if (!refuseBroad) return { real }
  const reason = broadRootReason(real, env)
  if (reason === undefined) return { real }
  if (allowBroadRoot) return { real, broad: reason }
  const shown = real === root ? '' : `(real path ${real}) `
  return fail(`${shown}is refused: ${reason}, so every file in it that this process can read would be readable by any client. ` +
    `Pass a project folder as ${configFlagName('root')}, or add ${OVERRIDE} to serve it anyway.`)
}
