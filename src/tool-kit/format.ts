import { displayText } from '../services/workspace/index.js'

/** Longest line shown before it is cut with a marker. */
export const MAX_LINE_CHARS = 2000

/** `1 file`, `2 files`, `1 entry`, `3 entries`: a count with its noun in the right number. */
export function counted (n: number | string, singular: string, plural = singular.endsWith('y') ? `${singular.slice(0, -1)}ies` : `${singular}s`): string {
  return `${n} ${n === 1 || n === '1' ? singular : plural}`
}

/** A time the server will act, as a UTC clock shows it, e.g. `14:05:00 UTC`. */
export const clockTime = (at: number): string => `${new Date(at).toISOString().slice(11, 19)} UTC`

/** Cuts a line over `max` characters, saying how much was left out. */
export function cutLine (line: string, max = MAX_LINE_CHARS): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [line cut: +${line.length - max} chars]`
}

// Extension groups → language; an array of pairs keeps the table short and readable.
const LANGUAGE_GROUPS: Array<[string, string]> = [
  ['ts mts cts', 'TypeScript'], ['tsx', 'TypeScript (TSX)'], ['js mjs cjs', 'JavaScript'], ['jsx', 'JavaScript (JSX)'],
  ['json jsonc', 'JSON'], ['md', 'Markdown'], ['mdx', 'MDX'], ['yaml yml', 'YAML'], ['toml', 'TOML'], ['xml', 'XML'],
  ['html htm', 'HTML'], ['css', 'CSS'], ['scss', 'SCSS'], ['py', 'Python'], ['rb', 'Ruby'], ['go', 'Go'], ['rs', 'Rust'],
  ['java', 'Java'], ['kt', 'Kotlin'], ['swift', 'Swift'], ['c h', 'C'], ['cc cpp cxx hpp', 'C++'], ['cs', 'C#'], ['php', 'PHP'],
  ['sh bash zsh', 'Shell'], ['sql', 'SQL'], ['lua', 'Lua'], ['r', 'R'], ['scala', 'Scala'], ['dart', 'Dart'], ['vue', 'Vue'],
  ['svelte', 'Svelte'], ['txt', 'Text'], ['csv', 'CSV'], ['ini', 'INI'], ['dockerfile', 'Dockerfile'], ['makefile', 'Makefile'],
  ['png', 'PNG image'], ['jpg jpeg', 'JPEG image'], ['gif', 'GIF image'], ['svg', 'SVG'], ['pdf', 'PDF'], ['zip', 'ZIP archive'],
  ['gz tgz', 'gzip archive'], ['wasm', 'WebAssembly']
]
const LANGUAGES = new Map(LANGUAGE_GROUPS.flatMap(([exts, name]) => exts.split(' ').map(ext => [ext, name] as const)))

/** Language (or format) guessed from the file name, or '' when unknown. */
export function languageOf (name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1).toLowerCase()
  const dot = base.lastIndexOf('.')
  const key = base === 'dockerfile' || base === 'makefile' ? base : dot > 0 ? base.slice(dot + 1) : ''
  return LANGUAGES.get(key) ?? ''
}

/** How a failed path argument is echoed: as given when relative, never an absolute path (it may lie outside). */
export function shownInput (input: string, field: string): string {
  if (typeof input !== 'string') return `${field} (not a string)`
  // Names are data: a control character in an echoed input must not start a new line of output.
  return input.startsWith('/') || input.startsWith('file:') || /^[A-Za-z]:[\\/]/.test(input) ? `${field} (absolute path)` : displayText(input.slice(0, 300))
}
