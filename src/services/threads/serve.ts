import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { lowerThisThread } from './priority.js'
import { SERVING, type ThreadStart } from './thread.js'
import { errorFields } from './thread-errors.js'

/** Sends a message of the thread's own (not an answer): progress, a watched folder changed. */
export type Notify = (notice: Record<string, unknown>) => void

/**
 * Answers one request; what it throws is answered as the error: its message, its name, stack, code and causes
 * (see thread-errors.ts), and its `details` when it has some.
 */
export type ThreadHandler<Request, Answer extends object> = (request: Request) => Answer | Promise<Answer>

/** An error a handler throws to say more than its message (read back as `ThreadError.details`; its cause crosses too). */
export class DetailedError extends Error {
  readonly details: Record<string, unknown>

  constructor (message: string, details: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options)
    this.details = details
  }
}

/**
 * Serves this thread with `makeHandler` when it was started as the thread module `name` (see `startThread`),
 * and says whether it did: imported anywhere else (the main thread, another thread), the module serves nothing.
 */
export function serveAs<Data, Request, Answer extends object> (
  name: string,
  makeHandler: (data: Data, notify: Notify) => ThreadHandler<Request, Answer>,
  start: unknown = workerData,
  port: MessagePort | null = parentPort,
  lower: (niceness: number) => unknown = lowerThisThread
): boolean {
  if (port === null || (start as Partial<ThreadStart> | null)?.thread !== name) return false
  const { data, niceness } = start as ThreadStart<Data>
  if (niceness !== undefined) lower(niceness)
  serveThread(port, data, makeHandler)
  return true
}

/**
 * Answers the requests on `port` with `handler`, each by its id, as they come (a handler that must take them
 * one at a time queues them itself). `makeHandler` runs once, with the start data and a way to send notices.
 */
export function serveThread<Data, Request, Answer extends object> (
  port: MessagePort,
  data: Data,
  makeHandler: (data: Data, notify: Notify) => ThreadHandler<Request, Answer>
): void {
  const handler = makeHandler(data, (notice) => port.postMessage(notice))
  port.postMessage({ notice: SERVING })
  port.on('message', ({ id, ...request }: { id: number } & Record<string, unknown>) => {
    Promise.resolve()
      .then(() => handler(request as Request))
      .then(
        answer => port.postMessage({ ...answer, id }),
        (err: unknown) => port.postMessage({
          id,
          error: err instanceof Error ? err.message : String(err),
          thrown: errorFields(err),
          ...(err instanceof DetailedError ? { details: err.details } : {})
        }))
  })
}
