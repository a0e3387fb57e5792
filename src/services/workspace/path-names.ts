/**
 * File names are bytes on POSIX, and names are data: whatever bytes a name holds, its text form is one
 * line of printable text that reads back to the same bytes.
 *
 * - Valid UTF-8 is shown as is, except characters that could break or forge a line of output
 *   (C0 and C1 controls, DEL, U+2028/U+2029, bidirectional overrides): their UTF-8 bytes become `\xHH`.
 * - A byte that is not part of valid UTF-8 becomes `\xHH`.
 * - A backslash that would otherwise start such an escape (`\x` + two hex digits) becomes `\x5c`.
 *
 * Typed back, an escape is decoded only when it names one of those bytes (a control byte, `\`, or a byte
 * ≥ 0x80). It can never produce NUL, `/` or `.`, so decoding cannot add a path component, climb out of a
 * folder or end a string: containment checked on the text still holds on the bytes (and is checked again).
 */

const ESCAPE_TEXT = /\\x([0-9a-fA-F]{2})/g
// eslint-disable-next-line no-control-regex -- the characters that can forge output are the point
const UNSAFE_CHAR = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\\(?=x[0-9a-fA-F]{2})/g

/** True for a byte an escape may stand for: a control byte, the backslash, or a byte ≥ 0x80. */
export function isEscapableByte (byte: number): boolean {
  return (byte >= 0x01 && byte <= 0x1f) || byte === 0x7f || byte === 0x5c || byte >= 0x80
}

const hex = (byte: number): string => `\\x${byte.toString(16).padStart(2, '0')}`
/** True when a character of `text` may need an escape (one UNSAFE_CHAR matches, or a backslash): most names have none. */
function mayNeedEscape (text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x5c || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) return true
  }
  return false
}

const escapeChars = (text: string): string => mayNeedEscape(text) ? text.replace(UNSAFE_CHAR, ch => [...Buffer.from(ch)].map(hex).join('')) : text

/** Shows file-name bytes as one safe line of text; `parseName` turns it back into the same bytes. */
export function displayName (bytes: Buffer): string {
  const text = bytes.toString('utf8')
  if (!text.includes('\uFFFD') || Buffer.from(text).equals(bytes)) return escapeChars(text)
  let out = ''
  let run = ''
  let i = 0
  while (i < bytes.length) {
    let taken = 0
    for (let n = 1; n <= 4 && i + n <= bytes.length; n++) {
      const slice = bytes.subarray(i, i + n)
      const decoded = slice.toString('utf8')
      if (Buffer.from(decoded).equals(slice)) {
        run += decoded
        taken = n
        break
      }
    }
    if (taken === 0) {
      out += escapeChars(run) + hex(bytes[i])
      run = ''
      taken = 1
    }
    i += taken
  }
  return out + escapeChars(run)
}

/** The text form of a name that arrived as text (a decoded string): controls and escape-like backslashes escaped. */
export function displayText (text: string): string {
  return escapeChars(text)
}

/** Turns a typed path into bytes: `\xHH` escapes of escapable bytes are decoded, anything else stays literal. */
export function parseName (text: string): Buffer {
  const parts: Buffer[] = []
  let last = 0
  for (const m of text.matchAll(ESCAPE_TEXT)) {
    const byte = parseInt(m[1], 16)
    if (!isEscapableByte(byte)) continue
    parts.push(Buffer.from(text.slice(last, m.index)), Buffer.from([byte]))
    last = m.index + m[0].length
  }
  if (parts.length === 0) return Buffer.from(text)
  parts.push(Buffer.from(text.slice(last)))
  return Buffer.concat(parts)
}

/** A path as a byte-preserving string (latin1), so path.relative works on any bytes. */
export function byteString (p: string | Buffer): string {
  return (typeof p === 'string' ? Buffer.from(p) : p).toString('latin1')
}

/** The fs argument for a byte-preserving string: a plain string when it is valid UTF-8, else a Buffer. */
export function fsPathOf (bytes: string): string | Buffer {
  const buf = Buffer.from(bytes, 'latin1')
  const text = buf.toString('utf8')
  return Buffer.from(text).equals(buf) ? text : buf
}
