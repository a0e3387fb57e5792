import type { ServerResponse } from 'node:http'

/** True when the client can take an SSE response: `text/event-stream`, a wildcard, or no `Accept` at all (lenient). */
export function acceptsEventStream (accept: string | undefined): boolean {
  if (accept === undefined || accept === '') return true
  return accept.includes('text/event-stream') || accept.includes('*/*') || accept.includes('text/*')
}

/** True when an Accept header admits a JSON body (absent: anything goes). */
export function acceptsJson (accept: string | undefined): boolean {
  if (accept === undefined || accept === '') return true
  return accept.includes('application/json') || accept.includes('*/*') || accept.includes('application/*')
}

const HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  // nginx buffers proxied responses unless told otherwise.
  'x-accel-buffering': 'no'
}
// A long-lived stream's connection is not worth reusing, and a kept-alive one would hold server.close() for Fastify's 72 s keep-alive timeout.
const LONG_LIVED_HEADERS = { ...HEADERS, connection: 'close' }

/** Starts an SSE response on a hijacked reply and sends its headers at once; `longLived` for the GET stream. */
export function openEventStream (raw: ServerResponse, longLived = false): void {
  raw.writeHead(200, longLived ? LONG_LIVED_HEADERS : HEADERS)
  raw.flushHeaders()
}

function writable (raw: ServerResponse): boolean {
  return !raw.destroyed && !raw.writableEnded
}

/** Writes one JSON-RPC message as an SSE `message` event with its id (JSON.stringify output holds no raw newline). */
export function writeEvent (raw: ServerResponse, message: string, id: string): void {
  if (writable(raw)) raw.write(`id: ${id}\nevent: message\ndata: ${message}\n\n`)
}

/** How long a client waits before reconnecting after the server closes a stream (the SSE `retry` field), ms. */
export const RETRY_MS = 1000

/**
 * Writes a priming event: an id with empty data, and the retry hint (SEP-1699). A client that loses the
 * stream before any message still has an id to resume from.
 */
export function writePriming (raw: ServerResponse, id: string): void {
  if (writable(raw)) raw.write(`id: ${id}\nretry: ${RETRY_MS}\ndata: \n\n`)
}

/** Writes an SSE comment line (ignored by clients; keeps intermediaries from timing the stream out). */
export function writeComment (raw: ServerResponse, text: string): void {
  if (writable(raw)) raw.write(`: ${text}\n\n`)
}

/** Ends an SSE stream if it is still open. */
export function endStream (raw: ServerResponse): void {
  if (writable(raw)) raw.end()
}
