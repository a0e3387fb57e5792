// What an argument error shows of what the client sent: bounded in length whatever the value's depth, width or
// string sizes, so a hostile argument gets its INVALID_ARGUMENT like any other (JSON.stringify of an array nested
// 50,000 deep overflowed the stack, and of a 100 MB string built it whole before the message cut it).

/** Most characters of a received value a message shows (longer: the first ones and `...`). */
export const SHOWN_VALUE_CHARS = 80
/** Most characters of one key a field name shows. */
const SHOWN_KEY_CHARS = 40
/** Most characters of a whole field name. */
const SHOWN_FIELD_CHARS = 160
/** Deepest nesting of arrays and objects an argument may have: no tool's schema comes near it. */
export const MAX_ARGUMENT_DEPTH = 64

/** Thrown by `Writer.add` once the text is long enough to be cut: ends the walk wherever it is. */
const FULL = Symbol('full')

/** A text that stops growing past `limit`. */
class Writer {
  text = ''
  constructor (readonly limit: number) {}
  add (part: string): void {
    this.text += part
    if (this.text.length > this.limit) throw FULL
  }
}

/** JSON of a string, from at most its first `limit + 1` characters (enough to know it must be cut). */
const quoted = (text: string, limit: number): string => JSON.stringify(text.length > limit ? text.slice(0, limit + 1) : text)

/** Writes `value` as JSON into `out` until it is full: each array or object writes a character before it goes deeper, so the depth reached is bounded by the limit too. */
function write (value: unknown, out: Writer): void {
  if (typeof value === 'string') return out.add(quoted(value, out.limit))
  if (Array.isArray(value)) {
    out.add('[')
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.add(',')
      write(value[i], out)
    }
    return out.add(']')
  }
  if (typeof value === 'object' && value !== null) {
    out.add('{')
    let first = true
    // for…in stops with the writer (Object.keys would list every key of a huge object first); a parsed JSON
    // object has no inherited keys to skip.
    for (const key in value) {
      out.add(`${first ? '' : ','}${quoted(key, out.limit)}:`)
      first = false
      write((value as Record<string, unknown>)[key], out)
    }
    return out.add('}')
  }
  // Numbers and booleans as JSON writes them (a parsed number is finite); null, and what JSON cannot carry, as null.
  out.add(typeof value === 'number' || typeof value === 'boolean' ? String(value) : 'null')
}

/** The JSON text of a received value, cut to SHOWN_VALUE_CHARS (then ending in `...`), at a cost bounded by that length. */
export function shownValue (value: unknown): string {
  // Arguments arrive as JSON: undefined only reaches here from a direct caller.
  /* c8 ignore next */
  if (value === undefined) return 'nothing'
  const out = new Writer(SHOWN_VALUE_CHARS)
  try {
    write(value, out)
  } catch (err) {
    // Only the writer's own signal ends a walk early; anything else is a bug to surface.
    /* c8 ignore next */
    if (err !== FULL) throw err
  }
  return out.text.length > SHOWN_VALUE_CHARS ? `${out.text.slice(0, SHOWN_VALUE_CHARS - 3)}...` : out.text
}

/** One key of a field name: `.name` when it reads as one, else `["…"]` (cut, escaped): a name is one short line. */
export function shownKey (key: string, first = false): string {
  const cut = key.length > SHOWN_KEY_CHARS ? `${key.slice(0, SHOWN_KEY_CHARS - 1)}…` : key
  if (/^[A-Za-z_$][\w$-]*$/.test(key.slice(0, SHOWN_KEY_CHARS - 1))) return first ? cut : `.${cut}`
  return `[${JSON.stringify(cut)}]`
}

/** A field name from its keys and indexes (`files[0].start_line`), cut to SHOWN_FIELD_CHARS. */
export function shownField (segments: ReadonlyArray<string | number>): string {
  let name = ''
  for (const s of segments) {
    name += typeof s === 'number' || /^\d+$/.test(s) ? `[${s}]` : shownKey(s, name === '')
    if (name.length > SHOWN_FIELD_CHARS) return `${name.slice(0, SHOWN_FIELD_CHARS - 1)}…`
  }
  return name
}

/**
 * The key of `args` under which arrays and objects nest more than `max` deep, or undefined. Iterative (a deep
 * value cannot overflow the stack here) and run before anything that walks a value recursively.
 */
export function tooDeep (args: Record<string, unknown>, max = MAX_ARGUMENT_DEPTH): string | undefined {
  for (const key of Object.keys(args)) {
    const stack: Array<[unknown, number]> = [[args[key], 1]]
    while (stack.length > 0) {
      const [node, depth] = stack.pop() as [unknown, number]
      if (typeof node !== 'object' || node === null) continue
      if (depth > max) return key
      for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1])
    }
  }
  return undefined
}
