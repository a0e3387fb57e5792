import { APP_ERR_INVALID_PARAMS, toolError } from '../../base/errors.js'
import type { LegacyScope, MethodCall, ModernScope } from '../method-types.js'
import type { TaskOwner } from './task-store.js'
import { legacyTask, modernTask } from './task-wire.js'

// The task methods of both eras. 2025-11-25: tasks/get, tasks/result (waits, then the tool's result), tasks/list,
// tasks/cancel (the cancelled task; -32602 for one already ended). 2026-07-28: tasks/get (the result inlined),
// tasks/update (answers), tasks/cancel (an empty acknowledgement, the same for an ended task). Each acts for the
// connection's owner (principal and session): another owner's task is answered as an unknown one.

const ownerOf = (call: MethodCall): TaskOwner => call.scope.owner
const pollOf = (call: MethodCall): number => call.scope.shared.tasks.settings.pollIntervalMs

/** tasks/get, 2025: the task. */
export async function legacyGet (call: MethodCall<LegacyScope>): Promise<string> {
  const record = await call.scope.shared.tasks.get(call.params.taskId, ownerOf(call))
  return call.scope.reply(call.id, call.method, legacyTask(record, pollOf(call)))
}

/** tasks/result, 2025: waits for the task to end, then answers what the tool call would have (nothing, if its session closed first). */
export async function legacyResult (call: MethodCall<LegacyScope>): Promise<string | undefined> {
  const { closedSignal } = call.scope
  const record = await call.scope.shared.tasks.settled(call.params.taskId, ownerOf(call), closedSignal).catch((err: unknown) => {
    // The session closed while it waited: no answer is due (the task runs on; another session may ask for it).
    if (closedSignal.aborted) return undefined
    throw err
  })
  if (record === undefined) return undefined
  const related = { 'io.modelcontextprotocol/related-task': { taskId: record.taskId } }
  if (record.status === 'completed' && record.result !== undefined) return call.scope.reply(call.id, call.method, { ...record.result, _meta: related })
  // A cancelled or failed task has no tool result: say which, as a tool error the model can act on.
  // Every cancelled record says why (statusMessage); every failed one carries its error.
  const why = record.status === 'cancelled'
    ? toolError('CANCELLED', `task ${record.taskId} (${record.tool}) was cancelled: ${String(record.statusMessage)}`, `call ${record.tool} again`)
    : toolError('INTERNAL', `task ${record.taskId} (${record.tool}) failed: ${(record.error as { message: string }).message}`, `call ${record.tool} again`)
  return call.scope.reply(call.id, call.method, { content: [{ type: 'text', text: why.message }], isError: true, _meta: related })
}

/** tasks/list, 2025: the caller's tasks, newest first, one page. */
export async function legacyList (call: MethodCall<LegacyScope>): Promise<string> {
  if (call.params.cursor !== undefined) throw new APP_ERR_INVALID_PARAMS("'cursor': tasks/list has one page; call it without a cursor")
  const records = await call.scope.shared.tasks.list(ownerOf(call))
  return call.scope.reply(call.id, call.method, { tasks: records.map(r => legacyTask(r, pollOf(call))) })
}

/** tasks/cancel, 2025: the task, cancelled; one that already ended (even a moment before, elsewhere) cannot be. */
export async function legacyCancel (call: MethodCall<LegacyScope>): Promise<string> {
  const { record, changed } = await call.scope.shared.tasks.cancel(call.params.taskId, ownerOf(call))
  if (!changed) throw new APP_ERR_INVALID_PARAMS(`task ${record.taskId} already ended (${record.status}): there is nothing to cancel`)
  return call.scope.reply(call.id, call.method, legacyTask(record, pollOf(call)))
}

/** tasks/get, 2026: the task with its result, error or questions inlined. */
export async function modernGet (call: MethodCall<ModernScope>): Promise<string> {
  const record = await call.scope.shared.tasks.get(call.params.taskId, ownerOf(call))
  return call.scope.reply(call.id, call.method, modernTask(record, pollOf(call)))
}

/** tasks/update, 2026: the client's answers to the task's questions; acknowledged empty. */
export async function modernUpdate (call: MethodCall<ModernScope>): Promise<string> {
  await call.scope.shared.tasks.answer(call.params.taskId, ownerOf(call), call.params.inputResponses)
  return call.scope.reply(call.id, call.method, { resultType: 'complete' })
}

/** tasks/cancel, 2026: acknowledged empty, whether the task was running or had ended. */
export async function modernCancel (call: MethodCall<ModernScope>): Promise<string> {
  await call.scope.shared.tasks.cancel(call.params.taskId, ownerOf(call))
  return call.scope.reply(call.id, call.method, { resultType: 'complete' })
}
