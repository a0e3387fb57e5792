import type { Era } from '../method-types.js'
import type { TaskRecord } from './task-store.js'

// A task on the wire, as each era shapes it: 2025-11-25 wraps it ({ task }) and names ttl and pollInterval;
// 2026-07-28 (SEP-2663) is flat, says resultType "task", names ttlMs and pollIntervalMs, and inlines the result.

/** The fields both eras share. */
function base (record: TaskRecord): Record<string, unknown> {
  const task: Record<string, unknown> = { taskId: record.taskId, status: record.status, createdAt: record.createdAt, lastUpdatedAt: record.lastUpdatedAt }
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage
  return task
}

/** A 2025-11-25 Task (tasks/get, tasks/cancel, tasks/list entries, notifications/tasks/status). */
export function legacyTask (record: TaskRecord, pollIntervalMs: number): Record<string, unknown> {
  return { ...base(record), ttl: record.ttlMs, pollInterval: pollIntervalMs }
}

/** A 2026-07-28 DetailedTask (tasks/get): the result, the error or the open questions inlined. */
export function modernTask (record: TaskRecord, pollIntervalMs: number): Record<string, unknown> {
  const task: Record<string, unknown> = { ...base(record), ttlMs: record.ttlMs, pollIntervalMs }
  if (record.status === 'completed' && record.result !== undefined) task.result = record.result
  if (record.status === 'failed' && record.error !== undefined) task.error = record.error
  if (record.status === 'input_required' && record.inputRequests !== undefined) task.inputRequests = record.inputRequests
  return task
}

/** What a tools/call that became a task answers: CreateTaskResult in the era's shape. */
export function taskCreated (era: Era, record: TaskRecord, pollIntervalMs: number): object {
  if (era === 'legacy') return { task: legacyTask(record, pollIntervalMs) }
  return { resultType: 'task', ...base(record), ttlMs: record.ttlMs, pollIntervalMs }
}
