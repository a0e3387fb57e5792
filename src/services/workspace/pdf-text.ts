import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { toolError } from '../../base/errors.js'
import { createJobThread, threadModule } from '../threads/index.js'

/** One extraction: the file's bytes and a page range (1-based, inclusive, clamped to the document). */
export interface PdfRequest {
  data: Uint8Array
  first: number
  last: number
}

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
  /** Ends the extraction thread (a later PDF starts it again). */
  close(): Promise<void>
}

/** Heap of the extraction thread: a hostile PDF exhausts this, not the server. */
const WORKER_HEAP_MB = 512

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
    : createJobThread<PdfRequest, PdfText>({
      url: threadModule('pdf-worker', import.meta.url),
      name: 'pdf-worker',
      data: location,
      heapMb: WORKER_HEAP_MB,
      errors: {
        failed: (why, crashed) => toolError('BINARY_FILE', `the PDF could not be read: ${why}`, { step: crashed ? 'describe-damaged' : 'describe-damaged-or-encrypted' }),
        stopped: () => toolError('BINARY_FILE', 'the PDF reader stopped before it finished', 'try a smaller page range, e.g. pages="1-5"'),
        cancelled: () => toolError('CANCELLED', 'the PDF text extraction was stopped', 'try a smaller page range, e.g. pages="1-5"')
      }
    })
  return {
    available: thread !== undefined,
    async extract (bytes, first, last, signal) {
      if (thread === undefined) throw toolError('BINARY_FILE', 'PDF text extraction is not installed (pdfjs-dist is missing)', { step: 'describe-file' })
      return await thread.run({ data: bytes, first, last }, signal)
    },
    close: async () => { await thread?.close() }
  }
}
