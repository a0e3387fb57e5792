// An error crossing a thread boundary: structured cloning keeps an Error's message and stack but drops its
// `code` and its own fields, so a thread sends these fields and the caller's side rebuilds the error from them.

/** An error as it crosses a thread boundary: name, message, stack, code, and its causes (a few deep). */
export interface ErrorFields {
  name: string
  message: string
  stack?: string
  code?: string | number
  cause?: ErrorFields
}

/** Causes carried across a boundary: deeper ones are dropped (a cycle, or a chain nobody reads). */
const MAX_CAUSES = 4

/** The fields of whatever a thread threw: an Error's own, or a non-Error's text. */
export function errorFields (err: unknown, depth = 0): ErrorFields {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) }
  const fields: ErrorFields = { name: err.name, message: err.message }
  if (typeof err.stack === 'string') fields.stack = err.stack
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' || typeof code === 'number') fields.code = code
  if (err.cause !== undefined && depth < MAX_CAUSES) fields.cause = errorFields(err.cause, depth + 1)
  return fields
}

/** The error a thread reported, rebuilt on this side with its name, stack, code and causes. */
export function errorFromFields (fields: ErrorFields): Error {
  const err = new Error(fields.message, fields.cause === undefined ? undefined : { cause: errorFromFields(fields.cause) })
  err.name = fields.name
  // The thread's stack, not this rebuild's: that is where it was thrown.
  if (fields.stack !== undefined) err.stack = fields.stack
  if (fields.code !== undefined) Object.assign(err, { code: fields.code })
  return err
}
