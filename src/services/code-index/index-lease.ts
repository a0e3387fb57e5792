import fs from 'node:fs'
import os from 'node:os'

/** Who holds an index file's lease, as its lock file says. */
export interface LeaseHolder {
  pid: number
  host: string
  /** When it was taken, ms since the epoch. */
  since: number
  /** Which holder in its process (a code index names its thread's leases, see dropLease). */
  token?: string
}

/** A held lease: renewed in the background until released. */
export interface IndexLease {
  release(): void
}

/** How long a lease lasts without renewal: a holder that died is taken over after this. */
export const LEASE_STALE_MS = 60_000
const RENEW_MS = 10_000

const UNKNOWN: LeaseHolder = { pid: 0, host: 'unknown', since: 0 }

const lockOf = (file: string): string => `${file}.lock`

function holderOf (lock: string): LeaseHolder | undefined {
  try {
    return JSON.parse(fs.readFileSync(lock, 'utf8')) as LeaseHolder
  } catch {
    return undefined
  }
}

/** True when the lock's holder is gone: not renewed for LEASE_STALE_MS, or a process of this host that no longer runs. */
function abandoned (lock: string, holder: LeaseHolder | undefined, now: number): boolean {
  const renewed = fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs
  if (renewed === undefined) return true
  if (now - renewed > LEASE_STALE_MS) return true
  if (holder === undefined || holder.host !== os.hostname()) return false
  try {
    process.kill(holder.pid, 0)
    return false
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

/**
 * Moves an abandoned lock out of the way, atomically: two processes taking over at once cannot both remove it,
 * and one that moved a lock another had just made anew puts it back. Either way the caller tries again.
 */
export function takeOver (lock: string, judged: LeaseHolder | undefined): void {
  const aside = `${lock}.${process.pid}.${Date.now()}`
  try {
    fs.renameSync(lock, aside)
  } catch {
    // Someone else moved it first.
    return
  }
  const moved = holderOf(aside)
  if (moved?.pid !== judged?.pid || moved?.since !== judged?.since) {
    try {
      fs.linkSync(aside, lock)
    } catch /* c8 ignore start */ {
      // A third process made a lock between the move and this (a race of three processes taking over at once).
    } /* c8 ignore stop */
  }
  fs.rmSync(aside, { force: true })
}

/**
 * Takes the lease on `file` (its `.lock` beside it, created exclusively): one writer at a time, across processes
 * and hosts sharing the folder. Returns the lease, or who holds it. A lease not renewed for a minute, or held by a
 * process of this host that is gone, is taken over. Renewal (the lock's mtime) runs every 10 s until release.
 */
export function acquireLease (file: string, now = Date.now(), renewMs = RENEW_MS, token?: string): IndexLease | { heldBy: LeaseHolder } {
  const lock = lockOf(file)
  const me: LeaseHolder = { pid: process.pid, host: os.hostname(), since: now, ...(token === undefined ? {} : { token }) }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(lock, JSON.stringify(me), { flag: 'wx', mode: 0o600 })
      const renew = setInterval(() => {
        const t = new Date()
        try {
          fs.utimesSync(lock, t, t)
        } catch {
          // The folder went away: the lease lapses with it.
        }
      }, renewMs)
      renew.unref()
      return {
        release () {
          clearInterval(renew)
          // Only our own lock: one taken over from us (we stalled past the minute) is the new holder's.
          if (holderOf(lock)?.pid === me.pid && holderOf(lock)?.since === me.since) fs.rmSync(lock, { force: true })
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const holder = holderOf(lock)
      if (!abandoned(lock, holder, now)) return { heldBy: holder ?? UNKNOWN }
      // The next attempt makes the lock, or finds whoever made it first.
      takeOver(lock, holder)
    }
  }
  /* c8 ignore next */
  return { heldBy: holderOf(lock) ?? UNKNOWN }
}

/**
 * Removes the lease on `file` when `token`'s holder in this process has it: what a thread ended before it could
 * let its lease go (while it was starting) may have left.
 */
export function dropLease (file: string, token: string): void {
  const holder = holderOf(lockOf(file))
  if (holder?.pid === process.pid && holder.token === token) fs.rmSync(lockOf(file), { force: true })
}

/** Describes a holder in a sentence ("process 42 on build-7 since 10:31:02 UTC"). */
export function holderText (holder: LeaseHolder): string {
  return `process ${holder.pid} on ${holder.host} since ${new Date(holder.since).toISOString().slice(11, 19)} UTC`
}
