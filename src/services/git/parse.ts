import { displayName } from '../workspace/index.js'

/** One commit as git_log lists it. */
export interface CommitSummary {
  hash: string
  parents: string[]
  author: string
  email: string
  /** Author date, ISO 8601 with the author's offset. */
  date: string
  subject: string
}

/** One commit with its whole message and committer (git_show). */
export interface CommitDetail extends CommitSummary {
  committer: string
  committerDate: string
  /** The full message, subject line included. */
  message: string
}

/** Change status letters of `git diff --raw`. */
export type ChangeStatus = 'A' | 'C' | 'D' | 'M' | 'R' | 'T' | 'U' | 'X'

/** One file of a diff: its path(s), status and line counts (null for binary content). */
export interface FileChange {
  path: string
  /** The path before a rename or copy. */
  oldPath?: string
  status: ChangeStatus
  /** Similarity of a rename or copy, percent. */
  similarity?: number
  added: number | null
  deleted: number | null
}

/** One line of `git blame`. */
export interface BlameLine {
  line: number
  hash: string
  author: string
  /** Author date, ISO 8601 UTC. */
  date: string
  summary: string
  text: string
}

/** Log format fields, NUL-separated: with `-z` commits are NUL-separated too, so the output is one flat list. */
export const LOG_FORMAT = '%H%x00%P%x00%an%x00%ae%x00%aI%x00%s'
const LOG_FIELDS = 6
/** Detail format: the log fields, then committer and the raw message (which may span lines). */
export const DETAIL_FORMAT = '%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%cI%x00%B'

// Names and messages are data: one safe line each, whatever bytes they hold.
const text = (b: Buffer): string => displayName(b)

function tokens (stdout: Buffer): Buffer[] {
  const out: Buffer[] = []
  let start = 0
  for (let i = stdout.indexOf(0); i !== -1; i = stdout.indexOf(0, start)) {
    out.push(stdout.subarray(start, i))
    start = i + 1
  }
  if (start < stdout.length) out.push(stdout.subarray(start))
  return out
}

function summary (f: Buffer[]): CommitSummary {
  const parents = f[1].toString('latin1').trim()
  return {
    hash: f[0].toString('latin1').replace(/^\n/, ''),
    parents: parents === '' ? [] : parents.split(' '),
    author: text(f[2]),
    email: text(f[3]),
    date: f[4].toString('latin1'),
    subject: text(f[5])
  }
}

/** Parses `git log -z --format=LOG_FORMAT`; a record cut short by a byte cap is dropped. */
export function parseLog (stdout: Buffer): CommitSummary[] {
  const all = tokens(stdout)
  const commits: CommitSummary[] = []
  for (let i = 0; i + LOG_FIELDS <= all.length; i += LOG_FIELDS) commits.push(summary(all.slice(i, i + LOG_FIELDS)))
  return commits
}

/** Parses `git log -1 -z --format=DETAIL_FORMAT`; the message keeps its lines, each made safe. */
export function parseDetail (stdout: Buffer): CommitDetail | undefined {
  const f = tokens(stdout)
  if (f.length < 8) return undefined
  const message = f.slice(7).map(b => b.toString('utf8')).join('\n').replace(/\n+$/, '')
  return {
    ...summary([f[0], f[1], f[2], f[3], f[4], Buffer.from(message.split('\n')[0])]),
    committer: text(f[5]),
    committerDate: f[6].toString('latin1'),
    message: message.split('\n').map(line => text(Buffer.from(line))).join('\n')
  }
}

const counted = (s: string): number | null => s === '-' ? null : Number(s)

/**
 * Parses `--raw --numstat -z` output: every raw entry (`:mode mode sha sha STATUS`, then one path, or two
 * for a rename or copy) comes first, then the numstat entries in the same order (`added\tdeleted\tpath`,
 * or `added\tdeleted\t` then the old and new path).
 */
export function parseChanges (stdout: Buffer): FileChange[] {
  const all = tokens(stdout)
  const changes: FileChange[] = []
  let i = 0
  while (i < all.length && all[i][0] === 0x3a) {
    const status = all[i].toString('latin1').split(' ').at(-1) as string
    const letter = status[0] as ChangeStatus
    const twoPaths = letter === 'R' || letter === 'C'
    const change: FileChange = twoPaths
      ? { path: text(all[i + 2]), oldPath: text(all[i + 1]), status: letter, similarity: Number(status.slice(1)), added: null, deleted: null }
      : { path: text(all[i + 1]), status: letter, added: null, deleted: null }
    changes.push(change)
    i += twoPaths ? 3 : 2
  }
  for (const change of changes) {
    if (i >= all.length) break
    const [added, deleted, rest] = all[i].toString('latin1').split('\t')
    change.added = counted(added)
    change.deleted = counted(deleted)
    i += rest === '' ? 3 : 1
  }
  return changes
}

/** Splits a unified diff into one text per file, in output order. */
export function splitPatch (patch: string): string[] {
  if (patch === '') return []
  const parts = patch.split(/^(?=diff --git )/m)
  return parts.filter(p => p.startsWith('diff --git '))
}

/** Parses `git blame --porcelain`: commit facts are given once, at a commit's first line. */
export function parseBlame (stdout: Buffer): BlameLine[] {
  const commits = new Map<string, { author: string, time: number, summary: string }>()
  const lines: BlameLine[] = []
  let current: { hash: string, line: number, author: string, time: number, summary: string } | undefined
  for (const raw of stdout.toString('utf8').split('\n')) {
    if (raw.startsWith('\t')) {
      if (current === undefined) continue
      const facts = commits.get(current.hash) ?? current
      commits.set(current.hash, facts)
      lines.push({ line: current.line, hash: current.hash, author: facts.author, date: new Date(facts.time * 1000).toISOString().slice(0, 19) + 'Z', summary: facts.summary, text: raw.slice(1) })
      current = undefined
      continue
    }
    const header = /^([0-9a-f]{40,64}) \d+ (\d+)/.exec(raw)
    if (header !== null) {
      current = { hash: header[1], line: Number(header[2]), author: '', time: 0, summary: '' }
      continue
    }
    if (current === undefined) continue
    const space = raw.indexOf(' ')
    const key = space === -1 ? raw : raw.slice(0, space)
    const value = space === -1 ? '' : raw.slice(space + 1)
    if (key === 'author') current.author = text(Buffer.from(value))
    else if (key === 'author-time') current.time = Number(value)
    else if (key === 'summary') current.summary = text(Buffer.from(value))
  }
  return lines
}
