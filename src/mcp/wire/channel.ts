/** Writes one serialized JSON-RPC message (no trailing newline) to the peer. */
export type Send = (message: string) => void

/** Where messages related to one request go (HTTP: that POST's SSE stream). */
export interface RequestChannel {
  send: Send
  /** Ends the connection the request's messages travel on, if the transport lets the client resume it (SEP-1699). */
  closeStream?(): void
  /** Fields for the request's log lines (HTTP: request id, principal; never a token). Read only for a line that is written. */
  readonly logFields?: Record<string, unknown>
}
