import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { toolError } from '../errors.js'
import { createJobThread } from './job-thread.js'

/** Text of a page range of a PDF. */
export interface PdfText {
  /** Pages in the document. */
  pages: number
  /** One text per page extracted, from `first` on. */
  texts: string[]
}

/** Extracts PDF text off the event loop. */
export interface PdfReader {
  /** Text of pages first..last (1-based, inclusive, clamped to the document); PDF_UNREADABLE-style tool errors otherwise. */
  extract(bytes: Uint8Array, first: number, last: number, signal?: AbortSignal): Promise<PdfText>
  /** Whether pdfjs-dist is installed (without it PDFs stay BINARY_FILE). */
  readonly available: boolean
}

/** Heap of the extraction thread: a hostile PDF exhausts this, not the server. */
const WORKER_HEAP_MB = 512

/**
 * Source of the extraction thread (CommonJS eval code, so it survives bundling): pdfjs-dist's legacy build,
 * loaded from its resolved file URL, with script evaluation off (`isEvalSupported: false`, the fix for
 * CVE-2024-4367's font code path) and no font loading. Text items are joined, a line break after each item
 * that ends a line.
 */
const PDF_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
let lib
parentPort.on('message', async ({ id, data, first, last }) => {
  let doc
  try {
    if (lib === undefined) {
      lib = await import(workerData.pdfjs)
      lib.GlobalWorkerOptions.workerSrc = workerData.worker
    }
    doc = await lib.getDocument({ data, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 }).promise
    const texts = []
    for (let n = first; n <= Math.min(last, doc.numPages); n++) {
      const page = await doc.getPage(n)
      const content = await page.getTextContent()
      let text = ''
      for (const item of content.items) {
        if (typeof item.str === 'string') text += item.str + (item.hasEOL ? '\\n' : '')
      }
      texts.push(text)
      page.cleanup()
    }
    parentPort.postMessage({ id, pages: doc.numPages, texts })
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message ? err.message : err) })
  } finally {
    if (doc !== undefined) await doc.destroy().catch(() => {})
  }
})
`

/** File URLs of pdfjs-dist's legacy build and its worker module. */
export interface PdfjsLocation {
  pdfjs: string
  worker: string
}

/** Where pdfjs-dist's legacy build lives (resolved like a require from this module), or null when it is not installed. */
export function locatePdfjs (resolve: (id: string) => string = createRequire(import.meta.url).resolve): PdfjsLocation | null {
  try {
    return {
      pdfjs: pathToFileURL(resolve('pdfjs-dist/legacy/build/pdf.mjs')).href,
      worker: pathToFileURL(resolve('pdfjs-dist/legacy/build/pdf.worker.mjs')).href
    }
  } catch {
    return null
  }
}

/** Creates the reader: one extraction thread, started on the first PDF, ended (and restarted later) when a call is abandoned. */
export function createPdfReader (location: PdfjsLocation | null = locatePdfjs()): PdfReader {
  const thread = location === null
    ? undefined
    : createJobThread<{ data: Uint8Array, first: number, last: number }, PdfText>({
      source: PDF_WORKER_SOURCE,
      workerData: location,
      heapMb: WORKER_HEAP_MB,
      errors: {
        failed: (why, crashed) => toolError('BINARY_FILE', `the PDF could not be read: ${why}`, crashed ? 'the file may be damaged; get_file_info describes it' : 'the file may be damaged or encrypted; get_file_info describes it'),
        stopped: () => toolError('BINARY_FILE', 'the PDF reader stopped before it finished', 'try a smaller page range, e.g. pages="1-5"'),
        cancelled: () => toolError('CANCELLED', 'the PDF text extraction was stopped', 'try a smaller page range, e.g. pages="1-5"')
      }
    })
  return {
    available: thread !== undefined,
    async extract (bytes, first, last, signal) {
      if (thread === undefined) throw toolError('BINARY_FILE', 'PDF text extraction is not installed (pdfjs-dist is missing)', 'get_file_info describes the file')
      return await thread.run({ data: bytes, first, last }, signal)
    }
  }
}
