import type { Redis } from 'ioredis'
import type { Answers, TaskRecord, TaskStore } from '../src/mcp/tasks.js'

// Task records in Redis, so every replica answers tasks/get for a task another one runs: the record as JSON
// `<prefix>task:<id>` (expiring with the task's ttl), the owner's ids in a sorted set `<prefix>tasks:<owner>` (by
// creation), the runner's heartbeat `<prefix>task-beat:<id>` and answers left for it `<prefix>task-answers:<id>`.

/** Milliseconds left of a record's ttl (at least one, so Redis never gets a zero or negative expiry). */
const remaining = (record: TaskRecord): number => Math.max(1, Date.parse(record.createdAt) + record.ttlMs - Date.now())

/** A TaskStore over an open ioredis client. */
export function redisTaskStore (redis: Redis, prefix: string): TaskStore {
  const recordKey = (id: string): string => `${prefix}task:${id}`
  const ownerKey = (owner: string): string => `${prefix}tasks:${owner}`
  const beatKey = (id: string): string => `${prefix}task-beat:${id}`
  const answersKey = (id: string): string => `${prefix}task-answers:${id}`
  return {
    async save (record) {
      const ttl = remaining(record)
      await redis.multi()
        .set(recordKey(record.taskId), JSON.stringify(record), 'PX', ttl)
        .zadd(ownerKey(record.owner), Date.parse(record.createdAt), record.taskId)
        // The set lives as long as its newest task: a record saved later pushes it out again.
        .pexpire(ownerKey(record.owner), ttl, 'GT')
        .pexpire(ownerKey(record.owner), ttl, 'NX')
        .exec()
    },
    async load (taskId) {
      const text = await redis.get(recordKey(taskId))
      return text === null ? undefined : JSON.parse(text) as TaskRecord
    },
    async list (owner) {
      const ids = await redis.zrevrange(ownerKey(owner), 0, 999)
      if (ids.length === 0) return []
      const texts = await redis.mget(ids.map(recordKey))
      return texts.filter((text): text is string => text !== null).map(text => JSON.parse(text) as TaskRecord)
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
