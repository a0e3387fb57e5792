import { APP_ERR_INVALID_PARAMS, APP_ERR_INVALID_REQUEST } from '../../base/errors.js'
import type { Logger } from '../../base/logger.js'
import type { Degradations } from '../../services/degradations.js'
import { RPC_ERROR } from '../wire/rpc.js'
import type { InputRequest } from '../../tool-api/define-tool.js'
import { hasIdentity, isTerminal, ownerKey, type Answers, type TaskChange, type TaskOwner, type TaskRecord, type TaskStore, type Transition } from './task-store.js'

// MCP tasks (2025-11-25 core, 2026-07-28 io.modelcontextprotocol/tasks): a tools/call that outlives its request runs
// on, and its client asks for its state (tasks/get), answers its questions (tasks/update) or stops it (tasks/cancel).
// The records live in a TaskStore (task-store.ts); what only this process can do (stop the work, hand it the
// client's answers) lives beside them in `live`.

/** The tasks extension's name (SEP-2663), under capabilities.extensions. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** Limits and hints of one server's tasks. */
export interface TaskSettings {
  /** How long a task's record (and result) is kept after it was created, ms. */
  ttlMs: number
  /** How often a client is told to poll, ms. */
  pollIntervalMs: number
  /** Most tasks one principal may have running (not terminal) at once, whatever its sessions. */
  maxLivePerOwner: number
  /** How long a task may run, ms (a request's own deadline is the tool timeout). */
  timeoutMs: number
  /** How often the replica running a task says it is alive and looks for answers and cancellations left elsewhere, ms. */
  heartbeatMs: number
}

/** The defaults: results kept an hour, polls every 500 ms, 16 running tasks per client, 10 minutes of work. */
export const TASK_DEFAULTS: TaskSettings = { ttlMs: 3_600_000, pollIntervalMs: 500, maxLivePerOwner: 16, timeoutMs: 600_000, heartbeatMs: 2000 }

/** Where tasks report what goes wrong in the background. */
export interface TasksOptions {
  log: Logger
  /** Failed heartbeats are reported here (component `task-heartbeat`), and recovered once a beat works again. */
  degradations: Degradations
}

/** What a change of a task carries (the time of the change is stamped by Tasks). */
export type TaskUpdate = Omit<TaskChange, 'lastUpdatedAt'>

/** Missed heartbeats after which a running task is taken for lost (its replica stopped). */
const LOST_AFTER_BEATS = 5

/** What only the process running a task can do: stop it, and hand it the client's answers. */
interface LiveTask {
  /** The record as it was created (a failed one is told from it when the store cannot be written). */
  created: TaskRecord
  /** Whose running-task limit it counts against. */
  principal: string
  stop(): void
  /** Told of each change of the record this process makes, and of an end another made (2025 status notifications). */
  onChange?: (record: TaskRecord) => void
  /** The answers received so far for the questions asked; resolved once every key has one. */
  answers?: { pending: Set<string>, received: Answers, done: (answers: Answers) => void }
  /** Resolves when the task reaches a terminal status. */
  settled: Promise<void>
  settle(): void
}

/** A new task id: 128 random bits, unguessable, so an id is not a capability another client can find. */
const newTaskId = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')

/** The error for a task id the caller cannot see: the same bytes whether it never existed, expired, or is another's. */
const unknownTask = (taskId: string): Error =>
  new APP_ERR_INVALID_PARAMS(`no task ${JSON.stringify(taskId.slice(0, 64))}: it never existed, expired, or belongs to another client (tasks/list shows yours)`)

/** What a replica says when it cannot reach the task store for a beat. */
const HEARTBEAT_DEGRADED = 'running tasks cannot reach the task store: their heartbeats, and cancellations and answers left on other replicas, wait; other replicas report a task lost after 5 missed beats'

/** One server's tasks: their records in `store`, their running work in this process. */
export class Tasks {
  private readonly live = new Map<string, LiveTask>()
  private sweeper: NodeJS.Timeout | undefined = undefined

  constructor (readonly store: TaskStore, readonly settings: TaskSettings, private readonly options: TasksOptions) {}

  /** Creates a working task for `owner`'s call of `tool`, stored before its id is given out; `stop` ends its work. */
  async create (owner: TaskOwner, tool: string, stop: () => void, onChange?: (record: TaskRecord) => void): Promise<TaskRecord> {
    const running = [...this.live.values()].filter(live => live.principal === owner.principal).length
    if (running >= this.settings.maxLivePerOwner) {
      throw new APP_ERR_INVALID_REQUEST(`${running} tasks of this client are still running (at most ${this.settings.maxLivePerOwner}): wait for one to finish, or cancel one with tasks/cancel`)
    }
    const now = new Date().toISOString()
    const record: TaskRecord = { taskId: newTaskId(), owner: ownerKey(owner), tool, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: this.settings.ttlMs }
    let settle!: () => void
    const settled = new Promise<void>(resolve => { settle = resolve })
    // Counted from here, before the first await: a burst of calls cannot all pass the check above.
    this.live.set(record.taskId, { created: record, principal: owner.principal, stop, settled, settle, onChange })
    try {
      await this.store.create(record)
      await this.store.beat(record.taskId, record.ttlMs)
    } catch (err) {
      // Never handed out: it runs nowhere and counts against no one.
      this.live.delete(record.taskId)
      throw err
    }
    this.sweeper ??= setInterval(() => this.heartbeat(), this.settings.heartbeatMs).unref()
    return record
  }

  /** One heartbeat; a failure is reported as a degradation, and recovered by the next beat that works. Never rejects. */
  private heartbeat (): void {
    const { degradations } = this.options
    this.sweep().then(() => degradations.recover('task-heartbeat'), (err: unknown) => degradations.report('task-heartbeat', HEARTBEAT_DEGRADED, err))
  }

  /**
   * For each task running here: say it is alive, stop it if another replica ended it, and hand it the answers a
   * client left on another replica.
   */
  private async sweep (): Promise<void> {
    for (const [taskId, live] of this.live) {
      const record = await this.store.load(taskId)
      if (record === undefined || isTerminal(record.status)) {
        // Ended elsewhere (cancelled, or failed as lost), or gone from the store: the work here stops.
        this.live.delete(taskId)
        if (record !== undefined) live.onChange?.(record)
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
  async get (taskId: unknown, owner: TaskOwner): Promise<TaskRecord> {
    if (typeof taskId !== 'string' || taskId === '') throw new APP_ERR_INVALID_PARAMS("'taskId' must be the taskId a tools/call returned")
    const record = await this.store.load(taskId)
    if (record === undefined || record.owner !== ownerKey(owner)) throw unknownTask(taskId)
    if (isTerminal(record.status) || this.live.has(record.taskId)) return record
    // Running elsewhere: a runner that stopped saying it is alive (its replica was killed) never finishes it.
    const last = await this.store.lastBeat(record.taskId) ?? 0
    if (Date.now() - last <= LOST_AFTER_BEATS * this.settings.heartbeatMs) return record
    const lost = { code: RPC_ERROR.InternalError, message: `the server running this task stopped before it finished (last seen ${last === 0 ? 'never' : new Date(last).toISOString()}); call ${record.tool} again` }
    return (await this.update(record.taskId, { status: 'failed', statusMessage: 'lost: its server stopped', error: lost }))?.record ?? record
  }

  /** The owner's tasks, newest first; refused to a request with no identity (it would be everyone's list). */
  async list (owner: TaskOwner): Promise<TaskRecord[]> {
    if (!hasIdentity(owner)) {
      throw new APP_ERR_INVALID_REQUEST('tasks/list needs to know whose tasks to list, and this server has neither sessions nor authentication (stateless HTTP without tokens): poll each task with tasks/get by the taskId its tools/call returned')
    }
    return await this.store.list(ownerKey(owner))
  }

  /**
   * Moves a task on (status and what comes with it) unless it already ended, in one step of the store; the record as
   * it is now. A change this process made is told to the task's runner here; so is, once, an end another made.
   */
  async update (taskId: string, change: TaskUpdate): Promise<Transition | undefined> {
    const moved = await this.store.transition(taskId, { ...change, lastUpdatedAt: new Date().toISOString() })
    const live = this.live.get(taskId)
    if (moved === undefined || live === undefined) return moved
    const ended = isTerminal(moved.record.status)
    if (moved.changed || ended) live.onChange?.(moved.record)
    if (ended) {
      this.live.delete(taskId)
      live.settle()
    }
    return moved
  }

  /**
   * Ends a task this process runs with its outcome; never rejects. An outcome the store refuses is stored as a
   * failure instead; when even that cannot be written, the failure is logged with its cause, the task's runner is
   * told `failed`, and other replicas report it lost once its heartbeats stop.
   */
  async end (taskId: string, outcome: TaskUpdate): Promise<void> {
    const { log } = this.options
    try {
      await this.update(taskId, outcome)
      return
    } catch (err) {
      log.error({ err, taskId, status: outcome.status }, 'task: its outcome could not be stored; storing it as failed')
    }
    const failed: TaskUpdate = { status: 'failed', statusMessage: 'its outcome could not be stored', error: { code: RPC_ERROR.InternalError, message: 'the server could not store this task\'s outcome (its task store failed); call the tool again' } }
    try {
      await this.update(taskId, failed)
    } catch (err) {
      log.error({ err, taskId }, 'task: the task store failed again; the task is reported failed to its session, and lost elsewhere')
      const live = this.live.get(taskId)
      // A task whose runner already heard of its end (a cancel) has no live entry: nothing is left to tell.
      if (live === undefined) return
      this.live.delete(taskId)
      live.onChange?.({ ...live.created, ...failed, lastUpdatedAt: new Date().toISOString() })
      live.settle()
    }
  }

  /** Stops the owner's task: cancelled at once, its work told to stop; `changed` is false for a task that had already ended. */
  async cancel (taskId: unknown, owner: TaskOwner): Promise<Transition> {
    const record = await this.get(taskId, owner)
    if (isTerminal(record.status)) return { record, changed: false }
    const live = this.live.get(record.taskId)
    const moved = await this.update(record.taskId, { status: 'cancelled', statusMessage: 'cancelled by the client' })
    // Expired between the read and the change: as unknown as any expired task.
    if (moved === undefined) throw unknownTask(record.taskId)
    if (moved.changed) live?.stop()
    return moved
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
  async answer (taskId: unknown, owner: TaskOwner, responses: unknown): Promise<void> {
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
  async settled (taskId: unknown, owner: TaskOwner, signal: AbortSignal): Promise<TaskRecord> {
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
