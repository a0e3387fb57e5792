import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { toolError } from '../errors.js'

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

interface Job {
  resolve: (text: PdfText) => void
  reject: (err: Error) => void
}

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
  let worker: Worker | undefined
  let nextId = 0
  const jobs = new Map<number, Job>()
  // One document at a time: a queued extraction waits on this chain.
  let chain: Promise<unknown> = Promise.resolve()

  const failAll = (err: Error): void => {
    for (const job of jobs.values()) job.reject(err)
    jobs.clear()
  }
  // An idle thread never keeps the process alive; one with a job in flight does, like any pending I/O.
  const track = (thread: Worker): void => {
    if (jobs.size > 0) thread.ref()
    else thread.unref()
  }
  function start (where: PdfjsLocation): Worker {
    const thread = new Worker(PDF_WORKER_SOURCE, { eval: true, workerData: where, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } })
    thread.unref()
    thread.on('message', (msg: { id: number, pages?: number, texts?: string[], error?: string }) => {
      const job = jobs.get(msg.id)
      if (job === undefined) return
      jobs.delete(msg.id)
      track(thread)
      if (msg.error !== undefined) job.reject(toolError('BINARY_FILE', `the PDF could not be read: ${msg.error}`, 'the file may be damaged or encrypted; get_file_info describes it'))
      else job.resolve({ pages: msg.pages as number, texts: msg.texts as string[] })
    })
    // A crash or the heap limit ends the thread: its jobs fail, and the next PDF starts a fresh one.
    thread.on('error', (err) => failAll(toolError('BINARY_FILE', `the PDF could not be read: ${err.message}`, 'the file may be damaged; get_file_info describes it')))
    thread.on('exit', () => {
      if (worker === thread) worker = undefined
      failAll(toolError('BINARY_FILE', 'the PDF reader stopped before it finished', 'try a smaller page range, e.g. pages="1-5"'))
    })
    return thread
  }

  function run (where: PdfjsLocation, bytes: Uint8Array, first: number, last: number, signal?: AbortSignal): Promise<PdfText> {
    signal?.throwIfAborted()
    worker ??= start(where)
    const thread = worker
    const id = ++nextId
    return new Promise<PdfText>((resolve, reject) => {
      const onAbort = (): void => {
        jobs.delete(id)
        // The engine answers an aborted call with its own TIMEOUT or CANCELLED; this only ends the wait.
        reject(toolError('CANCELLED', 'the PDF text extraction was stopped', 'try a smaller page range, e.g. pages="1-5"'))
        // The thread may be deep in a page: ending it is the only way to stop the work.
        if (worker === thread) worker = undefined
        thread.terminate().catch(() => undefined)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const settle = <T>(fn: (v: T) => void) => (v: T): void => {
        signal?.removeEventListener('abort', onAbort)
        fn(v)
      }
      jobs.set(id, { resolve: settle(resolve), reject: settle(reject) })
      track(thread)
      thread.postMessage({ id, data: bytes, first, last })
    })
  }

  return {
    available: location !== null,
    extract (bytes, first, last, signal) {
      if (location === null) return Promise.reject(toolError('BINARY_FILE', 'PDF text extraction is not installed (pdfjs-dist is missing)', 'get_file_info describes the file'))
      const result = chain.then(() => run(location, bytes, first, last, signal))
      chain = result.catch(() => undefined)
      return result
    }
  }
}
