import { serveAs } from '../threads/index.js'
import type { PdfjsLocation, PdfRequest, PdfText } from './pdf-text.js'

type Pdfjs = typeof import('pdfjs-dist/legacy/build/pdf.mjs')
/** The part of pdf.js's TextItem read here. */
interface TextItem { str: string, hasEOL: boolean }

/**
 * The extraction thread's handler: pdfjs-dist's legacy build, loaded from its resolved file URL (a bundle must
 * not carry it), with script evaluation off (`isEvalSupported: false`, the fix for CVE-2024-4367's font code
 * path) and no font loading. Text items are joined, a line break after each item that ends a line.
 */
export function pdfHandler (location: PdfjsLocation): (request: PdfRequest) => Promise<PdfText> {
  let lib: Promise<Pdfjs> | undefined
  const load = async (): Promise<Pdfjs> => {
    const loaded = await (import(location.pdfjs) as Promise<Pdfjs>)
    loaded.GlobalWorkerOptions.workerSrc = location.worker
    return loaded
  }
  return async ({ data, first, last }) => {
    const pdfjs = await (lib ??= load())
    const doc = await pdfjs.getDocument({ data, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 }).promise
    try {
      const texts: string[] = []
      for (let n = first; n <= Math.min(last, doc.numPages); n++) {
        const page = await doc.getPage(n)
        const content = await page.getTextContent()
        let text = ''
        // Marked-content entries are listed only when asked for: every item is text.
        for (const item of content.items as TextItem[]) text += item.str + (item.hasEOL ? '\n' : '')
        texts.push(text)
        page.cleanup()
      }
      return { pages: doc.numPages, texts }
    } finally {
      await doc.destroy().catch(() => undefined)
    }
  }
}

serveAs('pdf-worker', pdfHandler)
