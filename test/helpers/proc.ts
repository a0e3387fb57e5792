import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'

// What Linux's /proc says of a process (a server's CPU, its user, its children), and where a program is: read from
// files, so no helper process is started to ask.

/** CPU time (user + system, every thread) a process has used so far, ms; `self` is this process. USER_HZ is 100 on Linux. */
export function cpuMs (pid: number | 'self'): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** The real uid a process runs as. */
export function uidOf (pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('Uid:'))
  return Number(line?.split(/\s+/)[1])
}

/** The processes whose parent is `pid`. */
export function childrenOf (pid: number): number[] {
  return readdirSync('/proc').filter(name => /^\d+$/.test(name)).filter(name => {
    try {
      // After the command's closing parenthesis: state, then the parent's pid.
      return Number(readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]) === pid
    } catch {
      return false // gone since the listing
    }
  }).map(Number)
}

/** The first of `known` that exists, else `name` on an absolute PATH entry, else undefined. */
export function onPath (name: string, known: readonly string[] = []): string | undefined {
  return [...known, ...(process.env.PATH ?? '').split(delimiter).filter(dir => isAbsolute(dir)).map(dir => join(dir, name))].find(file => existsSync(file))
}
