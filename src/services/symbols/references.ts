/** How a name is used at a reference site, in the order the index stores them (its columns). */
export const REFERENCE_KINDS = ['call', 'reference', 'type', 'import', 'export', 'field', 'declaration'] as const
/** One of REFERENCE_KINDS. */
export type ReferenceKind = typeof REFERENCE_KINDS[number]

/**
 * The references one parse found in a file, as the index stores them: per kind the referenced names as index
 * tokens in source order, and each site packed in 32 bits. Made in the parser thread, so the index thread only
 * writes them.
 */
export interface FileReferences {
  /** Per kind (REFERENCE_KINDS order): the names' tokens (see nameToken), space-separated, in source order. */
  names: string[]
  /**
   * What the index keeps of the sites, as little-endian 32-bit words: how many sites each kind has, then every
   * site (see packSite), kind after kind (read them with siteWords).
   */
  sites: Uint8Array
  /** Include and import specifiers as written, without quotes (`linux/slab.h`, `./upload.js`). */
  imports: string[]
}

/** One reference site, unpacked. Lines and columns are 1-based; a column is counted in UTF-16 code units. */
export interface ReferenceSite {
  name: string
  kind: ReferenceKind
  line: number
  column: number
}

/** Largest column a site keeps exactly: a reference further right is kept at this column. */
export const MAX_COLUMN = 1023
/** Longest name indexed. */
const MAX_NAME = 200
const ASCII_LOWER = /^[a-z0-9_$]+$/
const NAME = /^[\p{L}\p{N}_$]+$/u

/**
 * The index token of a name: the name when it holds no capital letter, else each capital written `#` + its lower
 * case (`getUser` → `get#user`), so the full-text index — which folds case — keeps names apart by case. Undefined
 * for a name the index does not keep (too long, or a character its tokenizer would split at).
 */
export function nameToken (name: string): string | undefined {
  if (ASCII_LOWER.test(name)) return name.length > MAX_NAME ? undefined : name
  if (name.length > MAX_NAME || !NAME.test(name)) return undefined
  let token = ''
  for (const c of name) {
    const lower = c.toLowerCase()
    if (lower === c) token += c
    // A capital whose lower case is longer (İ) would not read back: such a name is not kept.
    else if (lower.length === c.length) token += `#${lower}`
    else return undefined
  }
  return token
}

/** The name an index token stands for (nameToken's inverse). */
export function nameOfToken (token: string): string {
  return token.includes('#') ? token.replace(/#(.)/gu, (_, c: string) => c.toUpperCase()) : token
}

/** A site in 32 bits: its line above the low 10 bits, its column (at most MAX_COLUMN) in them. */
export function packSite (line: number, column: number): number {
  return (line * (MAX_COLUMN + 1) + Math.min(column, MAX_COLUMN)) >>> 0
}

/** The line and column of a packed site. */
export function unpackSite (site: number): { line: number, column: number } {
  return { line: Math.floor(site / (MAX_COLUMN + 1)), column: site % (MAX_COLUMN + 1) }
}

/** Reads the little-endian 32-bit words of a stored sites blob (any alignment). */
export function siteWords (blob: Uint8Array): Uint32Array {
  const words = new Uint32Array(blob.byteLength >>> 2)
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength)
  for (let i = 0; i < words.length; i++) words[i] = view.getUint32(i * 4, true)
  return words
}

/** The stored form of sites words: little-endian bytes. */
export function sitesBlob (sites: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(sites.length * 4)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < sites.length; i++) view.setUint32(i * 4, sites[i], true)
  return bytes
}

/** Where the sites of kind `k` start in a sites array (after the counts). */
export function kindStart (sites: Uint32Array, k: number): number {
  let start = REFERENCE_KINDS.length
  for (let i = 0; i < k; i++) start += sites[i]
  return start
}

/** Every site of a file's references, unpacked with its name, kind after kind in source order. */
export function referenceSites (refs: Pick<FileReferences, 'names' | 'sites'>): ReferenceSite[] {
  const words = siteWords(refs.sites)
  const out: ReferenceSite[] = []
  REFERENCE_KINDS.forEach((kind, k) => {
    const names = refs.names[k] === '' ? [] : refs.names[k].split(' ')
    const start = kindStart(words, k)
    names.forEach((token, i) => out.push({ name: nameOfToken(token), kind, ...unpackSite(words[start + i]) }))
  })
  return out
}
