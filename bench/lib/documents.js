// Small valid documents for tests and benchmarks: a PDF with text pages, a greyscale PNG.
import { deflateSync } from 'node:zlib'

/** A valid PDF (1.4, Helvetica) with one page per text; lines of a text become lines of the page. */
/**
 * @param {string[]} pages
 * @returns {Buffer}
 */
export function makePdf (pages) {
  /** @type {string[]} */
  const objects = []
  const add = (/** @type {string} */ body) => objects.push(body)
  const catalog = add('')
  const pageTree = add('')
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>')
  /** @type {number[]} */
  const kids = []
  for (const text of pages) {
    const ops = text.split('\n').map((line, i) => `BT /F1 12 Tf 72 ${720 - i * 16} Td (${line.replace(/[\\()]/g, c => `\\${c}`)}) Tj ET`).join('\n')
    const content = add(`<< /Length ${Buffer.byteLength(ops)} >>\nstream\n${ops}\nendstream`)
    kids.push(add(`<< /Type /Page /Parent ${pageTree} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`))
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pageTree} 0 R >>`
  objects[pageTree - 1] = `<< /Type /Pages /Kids [${kids.map(k => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`
  let out = '%PDF-1.4\n'
  /** @type {number[]} */
  const offsets = []
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = Buffer.byteLength(out)
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map(o => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}

/** A valid PNG of `width` × `height` grey pixels. */
/**
 * @param {number} width
 * @param {number} height
 * @returns {Buffer}
 */
export function makePng (width, height) {
  const chunk = (/** @type {string} */ type, /** @type {Buffer} */ data) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([length, body, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bit depth
  header[9] = 0 // greyscale
  const rows = Buffer.alloc((width + 1) * height, 0x80)
  for (let y = 0; y < height; y++) rows[y * (width + 1)] = 0
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))])
}

/** @param {Buffer} bytes */
function crc32 (bytes) {
  let crc = 0xffffffff
  for (const byte of bytes) {
    crc ^= byte
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1))
  }
  return (crc ^ 0xffffffff) >>> 0
}
