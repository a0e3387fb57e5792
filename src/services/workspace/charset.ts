import { isUtf8 } from 'node:buffer'

/**
 * Below this confidence (0–100) a guess is not taken, and the bytes are shown as UTF-8 with U+FFFD. Low on
 * purpose: the text is already not UTF-8, a short Latin-1 file scores ~25, and any ASCII-compatible guess
 * shows its ASCII right; the answer names the charset, so a wrong guess is one encoding= away from right.
 */
const MIN_CONFIDENCE = 10
/**
 * What text that is not UTF-8 is read as when the detector has no usable guess (a few bytes are too few for
 * statistics): WHATWG's default for unlabelled legacy text, which decodes every byte to a character.
 */
const FALLBACK = 'windows-1252'
/** Charsets whose line feed is not the byte 0x0A, which the byte-wise line scanner could not split. */
const NOT_BYTE_WISE = /^(utf-?16|utf-?32|ucs-?2|ucs-?4|utf-?7|ibm|cp0?37|cp5|ebcdic)/i

/** The detector and the decoder, loaded on the first file that needs them: their tables are most of a megabyte. */
export interface CharsetTools {
  /** The legacy charset of text that is not valid UTF-8 (ending on a character boundary); windows-1252 without a better guess. */
  detect(head: Buffer): string
  /** True for a charset iconv-lite decodes and whose lines end with the byte 0x0A. */
  usable(name: string): boolean
  decode(bytes: Buffer, charset: string): string
}

let loaded: Promise<CharsetTools> | undefined

/** chardet ranks candidates by byte statistics; iconv-lite decodes. Both are pure JavaScript. */
export function charsetTools (): Promise<CharsetTools> {
  loaded ??= Promise.all([import('chardet'), import('iconv-lite')]).then(([{ default: chardet }, { default: iconv }]) => {
    const usable = (name: string): boolean => !/^utf-?8$/i.test(name) && !NOT_BYTE_WISE.test(name) && iconv.encodingExists(name)
    return {
      usable,
      detect: (head) => chardet.analyse(head).find(c => c.confidence >= MIN_CONFIDENCE && usable(c.name))?.name ?? FALLBACK,
      decode: (bytes, charset) => iconv.decode(bytes, charset)
    }
  })
  return loaded
}

/** The legacy charset of `head`, or undefined for UTF-8 (and ASCII) without loading the detector. */
export async function detectCharset (head: Buffer): Promise<string | undefined> {
  if (isUtf8(head)) return undefined
  return (await charsetTools()).detect(head)
}
