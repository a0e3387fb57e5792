import { toolError } from '../base/errors.js'
import { charsetTools, windowBounds, type FileSniff } from '../services/workspace/index.js'
import { cutLine } from './format.js'

/** A window of in-memory lines (a PDF's text), with read_files' semantics: start < 0 counts from the end. */
export function windowOf (all: string[], request: { start: number, end?: number, maxLines: number }): { first: number, lines: string[], total: number, keep: number } {
  const { from, to } = windowBounds(request, all.length)
  const lines = all.slice(from - 1, Math.max(from - 1, to)).map(line => cutLine(line))
  return { first: from, lines, total: all.length, keep: lines.length }
}

/**
 * Applies a caller's `encoding` to what the sniff found: UTF-8 turns detection off, a legacy charset is used
 * as asked. A UTF-16 file (told by its byte-order mark) or a charset that is not byte-wise is refused.
 */
export async function withEncoding (sniff: FileSniff, encoding: string | undefined, field: string): Promise<FileSniff> {
  if (encoding === undefined) return sniff
  const { charset: _charset, detected: _detected, ...plain } = sniff
  if (/^utf-?8$/i.test(encoding)) return plain
  if (!(await charsetTools()).usable(encoding)) {
    throw toolError('INVALID_ARGUMENT', `${field} "${encoding.slice(0, 40)}" is not an encoding read_files decodes (byte-wise legacy charsets only; UTF-16 is told by its byte-order mark)`,
      `e.g. ${field}="shift_jis", "gbk", "windows-1252" or "latin1"`)
  }
  if (sniff.encoding !== 'utf8') throw toolError('INVALID_ARGUMENT', `${field}: the file starts with a UTF-16 byte-order mark, so it is read as UTF-16`, `leave ${field} out`)
  return { ...plain, charset: encoding, detected: false }
}

/** The heading of an image: its facts, and whether it is attached to the answer. */
export function imageLine (shown: string, header: string, image: { tokens: number }, attached: boolean, budget: number): string {
  const facts = `${header}, ≈${image.tokens} tokens`
  return attached
    ? `### ${shown} — image (${facts}), attached after this text`
    : `### ${shown} — image (${facts}), not attached: it does not fit what max_response_tokens=${budget} leaves; read it alone or with a larger max_response_tokens`
}
