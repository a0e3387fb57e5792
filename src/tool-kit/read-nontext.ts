import { toolError } from '../base/errors.js'
import { binaryKind, imageFacts, isPdfHead, type BinaryKind, type FileSniff, type PdfReader, type WorkspaceService } from '../services/workspace/index.js'
import { counted, languageOf } from './format.js'
import { formatBytes } from '../services/byte-size.js'
import { formatCall } from './paging.js'

/** An open workspace file (tools never import node:fs). */
type FileHandle = Awaited<ReturnType<WorkspaceService['openFile']>>

/** Largest image sent as image content (the Anthropic API's per-image limit). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024
/** Largest PDF read for its text. */
export const MAX_PDF_BYTES = 64 * 1024 * 1024
/** Pages extracted per call at most (and by default, from the first). */
export const MAX_PDF_PAGES = 50

/** An image read for the answer. */
export interface ImageRead {
  mime: string
  width: number
  height: number
  /** Estimated tokens a model spends on it. */
  tokens: number
  base64: string
}

/** A PDF's extracted text as numbered lines, with the page range it covers. */
export interface PdfRead {
  lines: string[]
  pages: number
  first: number
  last: number
}

/** A page range `"3"` or `"3-7"`, validated against the per-call page limit. */
export function pageRange (pages: string | undefined, field: string): { first: number, last: number } {
  if (pages === undefined) return { first: 1, last: MAX_PDF_PAGES }
  const match = /^(\d{1,6})(?:-(\d{1,6}))?$/.exec(pages)
  const first = Number(match?.[1])
  const last = Number(match?.[2] ?? match?.[1])
  if (match === null || first < 1 || last < first) throw toolError('INVALID_ARGUMENT', `${field} "${pages.slice(0, 40)}" is not a page range`, `e.g. ${field}="1-10" or ${field}="4"`)
  if (last - first + 1 > MAX_PDF_PAGES) throw toolError('INVALID_ARGUMENT', `${field} asks for ${last - first + 1} pages, at most ${MAX_PDF_PAGES} per call`, `e.g. ${field}="${first}-${first + MAX_PDF_PAGES - 1}"`)
  return { first, last }
}

/** What a binary (or PDF-headed) file is, from its first bytes; undefined for plain text. */
export async function nonTextKind (sniff: FileSniff): Promise<BinaryKind | undefined> {
  if (!sniff.binary && !isPdfHead(sniff.head)) return undefined
  return await binaryKind(sniff.head)
}

/** The BINARY_FILE error for a file that is neither text, an image we send, nor a PDF, naming its type when known. */
export function binaryError (shown: string, size: number, kind: BinaryKind | undefined): Error {
  const ext = languageOf(shown)
  const what = kind !== undefined ? `, ${kind.mime}` : ext !== '' ? `, ${ext} by extension` : ''
  return toolError('BINARY_FILE', `"${shown}" is binary (${size} bytes${what}); not shown as text`, `get_file_info paths=["${shown}"] describes it`)
}

/** Reads an image (one of IMAGE_MIMES) whole for image content, checking its size and that its header parses. */
export async function readImage (handle: FileHandle, size: number, kind: BinaryKind, shown: string): Promise<ImageRead> {
  if (size > MAX_IMAGE_BYTES) throw toolError('FILE_TOO_LARGE', `"${shown}" is a ${formatBytes(size)} ${kind.mime} image (images are sent up to ${formatBytes(MAX_IMAGE_BYTES)})`, `get_file_info paths=["${shown}"] describes it`)
  const bytes = await handle.readFile()
  const facts = await imageFacts(bytes)
  if (facts === undefined) throw toolError('BINARY_FILE', `"${shown}" starts like a ${kind.mime} image but its header does not parse`, `get_file_info paths=["${shown}"] describes it`)
  return { mime: kind.mime, ...facts, base64: bytes.toString('base64') }
}

/** Extracts the text of a page range of a PDF, as lines with a `[page N]` line before each page. */
export async function readPdf (handle: FileHandle, size: number, pdf: PdfReader, pages: { first: number, last: number }, shown: string, signal: AbortSignal): Promise<PdfRead> {
  if (size > MAX_PDF_BYTES) throw toolError('FILE_TOO_LARGE', `"${shown}" is a ${formatBytes(size)} PDF (text is extracted from PDFs up to ${formatBytes(MAX_PDF_BYTES)})`, `get_file_info paths=["${shown}"] describes it`)
  const bytes = await handle.readFile({ signal })
  const text = await pdf.extract(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), pages.first, pages.last, signal)
  if (pages.first > text.pages) {
    throw toolError('INVALID_ARGUMENT', `"${shown}" has ${counted(text.pages, 'page')}; pages starts at ${pages.first}`, `e.g. ${formatCall('read_files', { files: [{ path: shown, pages: `1-${Math.min(text.pages, MAX_PDF_PAGES)}` }] })}`)
  }
  const lines: string[] = []
  text.texts.forEach((page, i) => {
    lines.push(`[page ${pages.first + i}]`)
    const body = page.replace(/\s+$/, '')
    if (body !== '') lines.push(...body.split('\n'))
  })
  return { lines, pages: text.pages, first: pages.first, last: pages.first + text.texts.length - 1 }
}

/** The header note of a PDF read, with the call for the next pages when more remain. */
export function pdfNote (read: PdfRead, shown: string, size: number): string {
  const more = read.last < read.pages
    ? `; next pages: ${formatCall('read_files', { files: [{ path: shown, pages: `${read.last + 1}-${Math.min(read.pages, read.last + MAX_PDF_PAGES)}` }] })}`
    : ''
  return `${formatBytes(size)}, PDF, ${counted(read.pages, 'page')}, text of pages ${read.first}–${read.last}${more}`
}
