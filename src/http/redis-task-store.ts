import type { Redis } from 'ioredis'
import type { Answers, TaskRecord, TaskStore } from '../mcp/tasks/task-store.js'

// Task records in Redis, so every replica answers tasks/get for a task another one runs: the record as a hash
// `<prefix>task-record:<id>` whose every field holds its value as JSON (expiring with the task's ttl), the owner's ids
// in a sorted set `<prefix>task-owner:<owner>` (by creation), the runner's heartbeat `<prefix>task-beat:<id>` and
// answers left for it `<prefix>task-answers:<id>`. A transition is one Lua script, so the status check and the write
// are one step for Redis: a cancel on one replica and a completion on another cannot both land.

/** Milliseconds left of a record's ttl (at least one, so Redis never gets a zero or negative expiry). */
const remaining = (record: TaskRecord): number => Math.max(1, Date.parse(record.createdAt) + record.ttlMs - Date.now())

/**
 * KEYS[1] the record; ARGV[1] '1' to drop inputRequests, then field/value pairs. Returns nil for an unknown task,
 * else { 1 if changed, 0 if the task had ended, the record's fields as HGETALL gives them }.
 */
const TRANSITION = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return nil end
if status == '"completed"' or status == '"failed"' or status == '"cancelled"' then
  return { 0, redis.call('HGETALL', KEYS[1]) }
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if ARGV[1] == '1' then redis.call('HDEL', KEYS[1], 'inputRequests') end
return { 1, redis.call('HGETALL', KEYS[1]) }
`

/** A record's fields as hash field/value pairs, each value as JSON. */
const fieldsOf = (values: Partial<TaskRecord>): string[] =>
  Object.entries(values).flatMap(([field, value]) => [field, JSON.stringify(value)])

/** A record from its hash (HGETALL as an object), or undefined when it holds nothing (unknown or expired). */
function recordOf (hash: Record<string, string>): TaskRecord | undefined {
  const entries = Object.entries(hash)
  if (entries.length === 0) return undefined
  return Object.fromEntries(entries.map(([field, text]) => [field, JSON.parse(text)])) as TaskRecord
}

/** The transition script, as defineCommand adds it to the client (EVALSHA, the script sent again only when Redis lost it). */
type WithTransition = Redis & { taskTransition: (key: string, ...args: string[]) => Promise<[number, string[]] | null> }

/** HGETALL's flat reply inside a script's answer, as an object. */
function hashOf (flat: string[]): Record<string, string> {
  const hash: Record<string, string> = {}
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]] = flat[i + 1]
  return hash
}

/** A TaskStore over an open ioredis client. */
export function redisTaskStore (client: Redis, prefix: string): TaskStore {
  client.defineCommand('taskTransition', { numberOfKeys: 1, lua: TRANSITION })
  const redis = client as WithTransition
  const recordKey = (id: string): string => `${prefix}task-record:${id}`
  const ownerKey = (owner: string): string => `${prefix}task-owner:${owner}`
  const beatKey = (id: string): string => `${prefix}task-beat:${id}`
  const answersKey = (id: string): string => `${prefix}task-answers:${id}`
  return {
    async create (record) {
      const ttl = remaining(record)
      await redis.multi()
        .hset(recordKey(record.taskId), ...fieldsOf(record))
        .pexpire(recordKey(record.taskId), ttl)
        .zadd(ownerKey(record.owner), Date.parse(record.createdAt), record.taskId)
        // The set lives as long as its newest task: a record created later pushes it out again.
        .pexpire(ownerKey(record.owner), ttl, 'GT')
        .pexpire(ownerKey(record.owner), ttl, 'NX')
        .exec()
    },
    async load (taskId) {
      return recordOf(await redis.hgetall(recordKey(taskId)))
    },
    async list (owner) {
      const ids = await redis.zrevrange(ownerKey(owner), 0, 999)
      if (ids.length === 0) return []
      // Sent back to back without waiting for each answer: one round trip's wait for the lot.
      const hashes = await Promise.all(ids.map(async id => await redis.hgetall(recordKey(id))))
      return hashes.map(recordOf).filter((record): record is TaskRecord => record !== undefined)
    },
    async transition (taskId, change) {
      const dropQuestions = change.status === 'input_required' ? '0' : '1'
      const reply = await redis.taskTransition(recordKey(taskId), dropQuestions, ...fieldsOf(change))
      if (reply === null) return undefined
      return { record: recordOf(hashOf(reply[1])) as TaskRecord, changed: reply[0] === 1 }
    },
    async beat (taskId, ttlMs) {
      await redis.set(beatKey(taskId), String(Date.now()), 'PX', ttlMs)
    },
    async lastBeat (taskId) {
      const text = await redis.get(beatKey(taskId))
      return text === null ? undefined : Number(text)
    },
    async leaveAnswers (taskId, answers, ttlMs) {
      const fields = Object.entries(answers).flatMap(([key, value]) => [key, JSON.stringify(value)])
      await redis.multi().hset(answersKey(taskId), ...fields).pexpire(answersKey(taskId), ttlMs).exec()
    },
    async takeAnswers (taskId) {
      const [[, fields]] = await redis.multi().hgetall(answersKey(taskId)).del(answersKey(taskId)).exec() as [[unknown, Record<string, string>], unknown]
      return Object.fromEntries(Object.entries(fields).map(([key, text]) => [key, JSON.parse(text) as Answers[string]]))
    }
  }
}
