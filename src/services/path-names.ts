/**
 * File names are bytes on POSIX. A name that is valid UTF-8 is shown as is; each byte that is not
 * part of a valid UTF-8 sequence is shown as `\xHH`, and such a path typed back is turned into the
 * same bytes again, so every listed name can be read back.
 */

const ESCAPE = /\\x([0-9a-fA-F]{2})/

/** Shows file-name bytes as text: valid UTF-8 verbatim, any other byte as `\xHH`. */
export function displayName (bytes: Buffer): string {
  const text = bytes.toString('utf8')
  if (!text.includes('\uFFFD') || Buffer.from(text).equals(bytes)) return text
  let out = ''
  let i = 0
  while (i < bytes.length) {
    let taken = 0
    for (let n = 1; n <= 4 && i + n <= bytes.length; n++) {
      const slice = bytes.subarray(i, i + n)
      const decoded = slice.toString('utf8')
      if (Buffer.from(decoded).equals(slice)) {
        out += decoded
        taken = n
        break
      }
    }
    if (taken === 0) {
      out += `\\x${bytes[i].toString(16).padStart(2, '0')}`
      taken = 1
    }
    i += taken
  }
  return out
}

/** True when a typed path holds `\xHH` escapes that may stand for raw bytes. */
export function hasByteEscapes (text: string): boolean {
  return ESCAPE.test(text)
}

/** Turns `\xHH` escapes back into raw bytes (the rest is encoded as UTF-8). */
export function unescapeBytes (text: string): Buffer {
  const parts: Buffer[] = []
  let rest = text
  for (let m = ESCAPE.exec(rest); m !== null; m = ESCAPE.exec(rest)) {
    parts.push(Buffer.from(rest.slice(0, m.index)), Buffer.from([parseInt(m[1], 16)]))
    rest = rest.slice(m.index + m[0].length)
  }
  parts.push(Buffer.from(rest))
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
