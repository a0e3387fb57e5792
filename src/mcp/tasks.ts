import { APP_ERR_INVALID_PARAMS, APP_ERR_INVALID_REQUEST } from '../errors.js'
import { RPC_ERROR } from './rpc.js'
import type { InputRequest, ToolResult } from '../tools/define-tool.js'

// MCP tasks (2025-11-25 core, 2026-07-28 io.modelcontextprotocol/tasks): a tools/call that outlives its request runs
// on, and its client asks for its state (tasks/get), answers its questions (tasks/update) or stops it (tasks/cancel).
// The records live in a TaskStore; what only this process can do (stop the work, hand it the client's answers) lives
// beside them in `live`.

/** The tasks extension's name (SEP-2663), under capabilities.extensions. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** Where a task is: running, waiting for the client's answers, or done one of three ways. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled'])

/** True for a status a task never leaves. */
export const isTerminal = (status: TaskStatus): boolean => TERMINAL.has(status)

/** One task as it is stored: what every replica can answer tasks/get from. */
export interface TaskRecord {
  taskId: string
  /** Who may see it: the authenticated principal, or '' where there is none (stdio, an open loopback server). */
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

/** Where task records are kept. */
export interface TaskStore {
  save(record: TaskRecord): Promise<void>
  load(taskId: string): Promise<TaskRecord | undefined>
  /** The owner's records, newest first. */
  list(owner: string): Promise<TaskRecord[]>
  /** Says the task's runner is alive now (it does so every few seconds while the task runs). */
  beat(taskId: string, ttlMs: number): Promise<void>
  /** When the task's runner last said so, epoch ms. */
  lastBeat(taskId: string): Promise<number | undefined>
  /** Leaves the client's answers for the runner, wherever it runs. */
  leaveAnswers(taskId: string, answers: Answers, ttlMs: number): Promise<void>
  /** Takes (and removes) the answers left for a task. */
  takeAnswers(taskId: string): Promise<Answers>
}

/** A client's answers to a task's questions, by the keys the tool chose. */
export type Answers = Record<string, Record<string, unknown>>

/** Limits and hints of one server's tasks. */
export interface TaskSettings {
  /** How long a task's record (and result) is kept after it was created, ms. */
  ttlMs: number
  /** How often a client is told to poll, ms. */
  pollIntervalMs: number
  /** Most tasks one owner may have running (not terminal) at once. */
  maxLivePerOwner: number
  /** How long a task may run, ms (a request's own deadline is the tool timeout). */
  timeoutMs: number
  /** How often the replica running a task says it is alive and looks for answers and cancellations left elsewhere, ms. */
  heartbeatMs: number
}

/** The defaults: results kept an hour, polls every 500 ms, 16 running tasks per client, 10 minutes of work. */
export const TASK_DEFAULTS: TaskSettings = { ttlMs: 3_600_000, pollIntervalMs: 500, maxLivePerOwner: 16, timeoutMs: 600_000, heartbeatMs: 2000 }

/** Missed heartbeats after which a running task is taken for lost (its replica stopped). */
const LOST_AFTER_BEATS = 5

/** Most records a memory store keeps; the oldest go first. */
const MEMORY_RECORDS = 10_000

/** Task records in this process: lost at exit, seen by no other replica. */
export class MemoryTaskStore implements TaskStore {
  private readonly records = new Map<string, TaskRecord>()
  private readonly beats = new Map<string, number>()
  private readonly answers = new Map<string, Answers>()

  async save (record: TaskRecord): Promise<void> {
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

/** What only the process running a task can do: stop it, and hand it the client's answers. */
interface LiveTask {
  owner: string
  stop(): void
  /** Told of each change of the record this process makes (2025 status notifications). */
  onChange?: (record: TaskRecord) => void
  /** The answers received so far for the questions asked; resolved once every key has one. */
  answers?: { pending: Set<string>, received: Answers, done: (answers: Answers) => void }
  /** Resolves when the task reaches a terminal status. */
  settled: Promise<void>
  settle(): void
}

/** A new task id: 128 random bits, unguessable, so an id is not a capability another client can find. */
const newTaskId = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')

/** One server's tasks: their records in `store`, their running work in this process. */
export class Tasks {
  private readonly live = new Map<string, LiveTask>()
  private sweeper: NodeJS.Timeout | undefined = undefined

  constructor (public store: TaskStore, readonly settings: TaskSettings = TASK_DEFAULTS) {}

  /** Creates a working task for `owner`'s call of `tool`, stored before its id is given out; `stop` ends its work. */
  async create (owner: string, tool: string, stop: () => void, onChange?: (record: TaskRecord) => void): Promise<TaskRecord> {
    const running = [...this.live.values()].filter(live => live.owner === owner).length
    if (running >= this.settings.maxLivePerOwner) {
      throw new APP_ERR_INVALID_REQUEST(`${running} tasks of this client are still running (at most ${this.settings.maxLivePerOwner}): wait for one to finish, or cancel one with tasks/cancel`)
    }
    const now = new Date().toISOString()
    const record: TaskRecord = { taskId: newTaskId(), owner, tool, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: this.settings.ttlMs }
    let settle!: () => void
    const settled = new Promise<void>(resolve => { settle = resolve })
    this.live.set(record.taskId, { owner, stop, settled, settle, onChange })
    await this.store.save(record)
    await this.store.beat(record.taskId, record.ttlMs)
    this.sweeper ??= setInterval(() => { this.sweep().catch(() => {}) }, this.settings.heartbeatMs).unref()
    return record
  }

  /**
   * Every heartbeat, for each task running here: say it is alive, stop it if another replica cancelled it, and hand
   * it the answers a client left on another replica.
   */
  private async sweep (): Promise<void> {
    for (const [taskId, live] of this.live) {
      const record = await this.store.load(taskId)
      if (record === undefined || isTerminal(record.status)) {
        this.live.delete(taskId)
        live.settle()
        live.stop()
        continue
      }
      await this.store.beat(taskId, record.ttlMs)
      if (live.answers !== undefined) await this.deliver(record, live.answers, await this.store.takeAnswers(taskId))
    }
    if (this.live.size === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  /** The owner's task, or APP_ERR_INVALID_PARAMS naming the id (another owner's task is as unknown as a made-up one). */
  async get (taskId: unknown, owner: string): Promise<TaskRecord> {
    if (typeof taskId !== 'string' || taskId === '') throw new APP_ERR_INVALID_PARAMS("'taskId' must be the taskId a tools/call returned")
    const record = await this.store.load(taskId)
    if (record === undefined || record.owner !== owner) throw new APP_ERR_INVALID_PARAMS(`no task ${JSON.stringify(taskId.slice(0, 64))}: it never existed, expired, or belongs to another client (tasks/list shows yours)`)
    if (isTerminal(record.status) || this.live.has(record.taskId)) return record
    // Running elsewhere: a runner that stopped saying it is alive (its replica was killed) never finishes it.
    const last = await this.store.lastBeat(record.taskId) ?? 0
    if (Date.now() - last <= LOST_AFTER_BEATS * this.settings.heartbeatMs) return record
    const lost = { code: RPC_ERROR.InternalError, message: `the server running this task stopped before it finished (last seen ${last === 0 ? 'never' : new Date(last).toISOString()}); call ${record.tool} again` }
    return await this.update(record.taskId, { status: 'failed', statusMessage: 'lost: its server stopped', error: lost }) ?? record
  }

  /** The owner's tasks, newest first. */
  async list (owner: string): Promise<TaskRecord[]> {
    return await this.store.list(owner)
  }

  /** Moves a task on (status and what comes with it) unless it already ended. */
  async update (taskId: string, change: Partial<Pick<TaskRecord, 'status' | 'statusMessage' | 'result' | 'error' | 'inputRequests'>>): Promise<TaskRecord | undefined> {
    const record = await this.store.load(taskId)
    if (record === undefined || isTerminal(record.status)) return record
    const next: TaskRecord = { ...record, ...change, lastUpdatedAt: new Date().toISOString() }
    if (next.status !== 'input_required') delete next.inputRequests
    await this.store.save(next)
    this.live.get(taskId)?.onChange?.(next)
    if (isTerminal(next.status)) {
      this.live.get(taskId)?.settle()
      this.live.delete(taskId)
    }
    return next
  }

  /** Stops the owner's task: cancelled at once; its work is told to stop. A task that already ended stays as it was. */
  async cancel (taskId: unknown, owner: string): Promise<TaskRecord> {
    const record = await this.get(taskId, owner)
    if (isTerminal(record.status)) return record
    const live = this.live.get(record.taskId)
    const cancelled = await this.update(record.taskId, { status: 'cancelled', statusMessage: 'cancelled by the client' })
    live?.stop()
    return cancelled ?? record
  }

  /** Parks a task until the client has answered every question (tasks/update); the answers by key. */
  async ask (taskId: string, questions: Record<string, InputRequest>): Promise<Answers> {
    const live = this.live.get(taskId)
    /* c8 ignore next -- a task asks only while it runs, and a running task is live */
    if (live === undefined) throw new Error(`task ${taskId} is not running here`)
    const answered = new Promise<Answers>(resolve => {
      live.answers = { pending: new Set(Object.keys(questions)), received: {}, done: resolve }
    })
    await this.update(taskId, { status: 'input_required', inputRequests: questions })
    const answers = await Promise.race([answered, live.settled.then(() => undefined)])
    live.answers = undefined
    if (answers === undefined) throw new Error('task ended while waiting for input')
    await this.update(taskId, { status: 'working' })
    return answers
  }

  /** Hands the client's answers (tasks/update) to the owner's task; it resumes once every question it asks has one. */
  async answer (taskId: unknown, owner: string, responses: unknown): Promise<void> {
    const record = await this.get(taskId, owner)
    if (typeof responses !== 'object' || responses === null || Array.isArray(responses) || !Object.values(responses).every(v => typeof v === 'object' && v !== null && !Array.isArray(v))) {
      throw new APP_ERR_INVALID_PARAMS("'inputResponses' must map each key of the task's inputRequests to the client's result object")
    }
    // Answers to questions the task does not ask, or to a task that asks nothing now, change nothing (SEP-2663 acks them).
    if (record.status !== 'input_required') return
    const live = this.live.get(record.taskId)
    // Running on another replica: the answers wait in the store for its next heartbeat.
    if (live === undefined) return await this.store.leaveAnswers(record.taskId, responses as Answers, record.ttlMs)
    // Running here and input_required: its waiter was set before the status was (ask()).
    await this.deliver(record, live.answers as NonNullable<LiveTask['answers']>, responses as Answers)
  }

  /** Hands answers to a task waiting here; it resumes once every question it asks has one, else asks the rest. */
  private async deliver (record: TaskRecord, waiting: NonNullable<LiveTask['answers']>, answers: Answers): Promise<void> {
    const given = Object.entries(answers).filter(([key]) => waiting.pending.has(key))
    if (given.length === 0) return
    for (const [key, value] of given) {
      waiting.received[key] = value
      waiting.pending.delete(key)
    }
    if (waiting.pending.size === 0) {
      waiting.done(waiting.received)
      return
    }
    // Only the questions still open stay on the record.
    const open = Object.fromEntries(Object.entries(record.inputRequests ?? {}).filter(([key]) => waiting.pending.has(key)))
    await this.update(record.taskId, { status: 'input_required', inputRequests: open })
  }

  /** Resolves once the owner's task has ended (tasks/result of 2025-11-25 waits for it); the final record. */
  async settled (taskId: unknown, owner: string, signal: AbortSignal): Promise<TaskRecord> {
    let record = await this.get(taskId, owner)
    while (!isTerminal(record.status)) {
      const live = this.live.get(record.taskId)
      // Here: its end settles the wait. Elsewhere: its record is read again each heartbeat (get() notices a lost one).
      const ended = live === undefined ? new Promise<void>(resolve => setTimeout(resolve, this.settings.heartbeatMs)) : live.settled
      await new Promise<void>((resolve, reject) => {
        // A request whose connection closed while the record was read: an abort listener added now would never fire.
        if (signal.aborted) return reject(signal.reason)
        const onAbort = (): void => reject(signal.reason)
        signal.addEventListener('abort', onAbort, { once: true })
        ended.then(() => { signal.removeEventListener('abort', onAbort); resolve() }, reject)
      })
      record = await this.get(record.taskId, owner)
    }
    return record
  }
}
