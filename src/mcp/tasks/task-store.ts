import type { InputRequest, ToolResult } from '../../tool-api/define-tool.js'

// What a task is as it is stored, who owns it, and the store contract both stores keep (this process's memory here,
// Redis in http/redis-task-store.ts). A task's status moves only through transition(), which the store applies
// in one atomic step and refuses once the task has ended: two writers (a cancel and a completion, on one replica or
// two) cannot both win.

/** Where a task is: running, waiting for the client's answers, or done one of three ways. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled'])

/** True for a status a task never leaves. */
export const isTerminal = (status: TaskStatus): boolean => TERMINAL.has(status)

/**
 * Who a request acts for, as far as tasks go: a task is its owner's, and another owner's request gets what an unknown
 * task id gets.
 */
export interface TaskOwner {
  /** The authenticated principal's id; '' without authentication. The running-task limit counts per principal. */
  principal: string
  /** The stateful HTTP session's id or the stdio connection's; absent where requests stand alone (stateless HTTP, 2026-07-28 over HTTP). */
  session?: string
}

/** The key an owner's tasks are stored and matched under: one per (principal, session), never shared by two. */
export const ownerKey = (owner: TaskOwner): string => JSON.stringify(owner.session === undefined ? [owner.principal] : [owner.principal, owner.session])

/** A request with no identity: no principal, no session (stateless HTTP without authentication). */
export const NO_OWNER: TaskOwner = Object.freeze({ principal: '' })

/** The owner of a connection that stands for one client without authentication (stdio, a test's session): a random session id. */
export const connectionOwner = (): TaskOwner => ({ principal: '', session: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url') })

/** False for a request that carries no identity at all (no session, no principal): it may reach a task only by its id. */
export const hasIdentity = (owner: TaskOwner): boolean => owner.principal !== '' || owner.session !== undefined

/** One task as it is stored: what every replica can answer tasks/get from. */
export interface TaskRecord {
  taskId: string
  /** Whose it is: ownerKey() of the owner that created it. */
  owner: string
  tool: string
  status: TaskStatus
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  /** How long the record is kept after it was created, ms. */
  ttlMs: number
  /** The tool's result, once completed. */
  result?: ToolResult
  /** A protocol-level failure (a crash, not a tool error), once failed. */
  error?: { code: number, message: string }
  /** The questions still unanswered, while input_required (keys the tool chose). */
  inputRequests?: Record<string, InputRequest>
}

/** A move of a task: its new status and what comes with it; fields left out keep their value (inputRequests only lives while input_required). */
export type TaskChange = Pick<TaskRecord, 'status' | 'lastUpdatedAt'> & Partial<Pick<TaskRecord, 'statusMessage' | 'result' | 'error' | 'inputRequests'>>

/** What a transition left: the record as it is now, and whether this change is what made it so. */
export interface Transition {
  record: TaskRecord
  /** False when the task had already ended: the record is as it ended, and the change was dropped. */
  changed: boolean
}

/** A client's answers to a task's questions, by the keys the tool chose. */
export type Answers = Record<string, Record<string, unknown>>

/** Where task records are kept. */
export interface TaskStore {
  /** Stores a new task's record. */
  create(record: TaskRecord): Promise<void>
  load(taskId: string): Promise<TaskRecord | undefined>
  /** The owner's records (by ownerKey), newest first. */
  list(owner: string): Promise<TaskRecord[]>
  /** Applies `change` in one atomic step unless the task already ended; undefined for a task the store does not know. */
  transition(taskId: string, change: TaskChange): Promise<Transition | undefined>
  /** Says the task's runner is alive now (it does so every few seconds while the task runs). */
  beat(taskId: string, ttlMs: number): Promise<void>
  /** When the task's runner last said so, epoch ms. */
  lastBeat(taskId: string): Promise<number | undefined>
  /** Leaves the client's answers for the runner, wherever it runs. */
  leaveAnswers(taskId: string, answers: Answers, ttlMs: number): Promise<void>
  /** Takes (and removes) the answers left for a task. */
  takeAnswers(taskId: string): Promise<Answers>
}

/** The record after `change` (the Redis store's script does the same field by field). */
function applyChange (record: TaskRecord, change: TaskChange): TaskRecord {
  const next: TaskRecord = { ...record, ...change }
  if (next.status !== 'input_required') delete next.inputRequests
  return next
}

/** Most records a memory store keeps; the oldest go first. */
const MEMORY_RECORDS = 10_000

/** Task records in this process: lost at exit, seen by no other replica. */
export class MemoryTaskStore implements TaskStore {
  private readonly records = new Map<string, TaskRecord>()
  private readonly beats = new Map<string, number>()
  private readonly answers = new Map<string, Answers>()

  async create (record: TaskRecord): Promise<void> {
    // A Map keeps a key where it was first set: the records stay in creation order (list, and which go first).
    this.records.set(record.taskId, { ...record })
    this.expire()
  }

  async load (taskId: string): Promise<TaskRecord | undefined> {
    this.expire()
    const record = this.records.get(taskId)
    return record === undefined ? undefined : { ...record }
  }

  async list (owner: string): Promise<TaskRecord[]> {
    this.expire()
    return [...this.records.values()].filter(r => r.owner === owner).reverse().map(r => ({ ...r }))
  }

  async transition (taskId: string, change: TaskChange): Promise<Transition | undefined> {
    // One synchronous section from the read to the write: no other transition can come between them.
    this.expire()
    const record = this.records.get(taskId)
    if (record === undefined) return undefined
    if (isTerminal(record.status)) return { record: { ...record }, changed: false }
    const next = applyChange(record, change)
    this.records.set(taskId, next)
    return { record: { ...next }, changed: true }
  }

  async beat (taskId: string): Promise<void> {
    this.beats.set(taskId, Date.now())
  }

  async lastBeat (taskId: string): Promise<number | undefined> {
    return this.beats.get(taskId)
  }

  async leaveAnswers (taskId: string, answers: Answers): Promise<void> {
    this.answers.set(taskId, { ...this.answers.get(taskId), ...answers })
  }

  async takeAnswers (taskId: string): Promise<Answers> {
    const answers = this.answers.get(taskId) ?? {}
    this.answers.delete(taskId)
    return answers
  }

  private expire (): void {
    const now = Date.now()
    for (const [id, record] of this.records) {
      if (this.records.size <= MEMORY_RECORDS && Date.parse(record.createdAt) + record.ttlMs > now) continue
      this.records.delete(id)
      this.beats.delete(id)
      this.answers.delete(id)
    }
  }
}
