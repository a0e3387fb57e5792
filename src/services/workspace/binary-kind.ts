/** What a file's first bytes say it is (`application/pdf`, `image/png`, `application/zip` …). */
export interface BinaryKind {
  mime: string
  ext: string
}

/** Image types returned to the client as MCP image content: what vision models accept. */
export const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

/** True when the bytes start like a PDF (which may be all ASCII, so the NUL check alone misses it). */
export const isPdfHead = (head: Buffer): boolean => head.subarray(0, 5).toString('latin1') === '%PDF-'

/** The type of a file from its magic bytes (file-type's table), or undefined when nothing matches. */
export async function binaryKind (head: Buffer): Promise<BinaryKind | undefined> {
  if (isPdfHead(head)) return { mime: 'application/pdf', ext: 'pdf' }
  // Loaded on the first binary file: text-only sessions (and stdio's cold start) never pay for the table.
  const { fileTypeFromBuffer } = await import('file-type')
  const found = await fileTypeFromBuffer(head)
  return found === undefined ? undefined : { mime: found.mime, ext: found.ext }
}

/** Longest edge and pixel area a model sees an image at (larger ones are scaled down before they are counted). */
const MAX_EDGE = 1568
const MAX_PIXELS = 1_150_000
/** Pixels per token, as Anthropic documents its image cost (tokens ≈ width × height / 750). */
const PIXELS_PER_TOKEN = 750

/** Width, height and estimated token cost of an image, or undefined when its header does not parse. */
export async function imageFacts (bytes: Buffer): Promise<{ width: number, height: number, tokens: number } | undefined> {
  const { imageSize } = await import('image-size')
  let size: { width: number, height: number }
  try {
    size = imageSize(bytes)
  } catch {
    return undefined
  }
  const { width, height } = size
  const scale = Math.min(1, MAX_EDGE / Math.max(width, height), Math.sqrt(MAX_PIXELS / (width * height)))
  return { width, height, tokens: Math.max(1, Math.ceil((width * scale) * (height * scale) / PIXELS_PER_TOKEN)) }
}
