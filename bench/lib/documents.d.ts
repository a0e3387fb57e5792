/** A valid PDF (1.4, Helvetica) with one page per text; lines of a text become lines of the page. */
export function makePdf (pages: string[]): Buffer
/** A valid PNG of `width` × `height` grey pixels. */
export function makePng (width: number, height: number): Buffer
