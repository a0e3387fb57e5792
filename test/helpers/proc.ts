import { readFileSync } from 'node:fs'

// What Linux's /proc says of a process: the tests that measure a server's CPU or check its user read it here.

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
