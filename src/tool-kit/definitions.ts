// How the symbol tools show, rank and pick definitions: find_symbol, get_symbols, find_references and
// get_call_graph share these, so no tool imports another.
import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import type { SymbolRow } from '../services/code-index/index.js'
import { shownInput } from './format.js'
import { compareText } from './paging.js'
import type { Definition } from './reference-source.js'

/** One definition in structuredContent (get_symbols, find_symbol). */
export const SymbolEntryOutput = Type.Object({
  path: Type.String(),
  kind: Type.String(),
  name: Type.String(),
  container: Type.Optional(Type.String({ description: 'Enclosing symbol' })),
  line: Type.Integer({ description: 'First line (1-based)' }),
  end_line: Type.Integer({ description: 'Last line' }),
  signature: Type.String({ description: 'Head of the definition' })
})

// Where definitions are usually not the one meant: tests, examples, tooling, vendored code.
const ASIDE = /(^|\/)(tests?|testing|__tests__|spec|specs|examples?|samples?|fixtures?|mocks?|vendor|third[_-]?party|node_modules|tools|scripts|bench(marks?)?|docs?)\//i
const KIND_RANK: Record<string, number> = { class: 0, struct: 0, interface: 0, trait: 0, enum: 0, union: 0, function: 0, type: 1, method: 1, module: 1, impl: 2, macro: 2, constant: 3 }

/** A definition as this session sees it: its row and its display path. */
export interface Found extends SymbolRow { shown: string }

/** Best first: the exact spelling, a definition over a macro or constant, main code over tests and tools, a shorter name, a shallower path. */
export function rank (name: string): (a: Found, b: Found) => number {
  const key = (f: Found): number[] => [Number(f.name !== name), KIND_RANK[f.kind], Number(ASIDE.test(f.shown)), f.name.length, f.shown.split('/').length]
  return (a, b) => {
    const [ka, kb] = [key(a), key(b)]
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i]
    return compareText(a.shown, b.shown) || a.line - b.line
  }
}

/** `Owner.name` / `Owner::name` → the owner and the name; a plain name has no owner. */
export function splitName (input: string): { owner?: string, name: string } {
  const cut = /^(.+?)(?:\.|::)([^.:]+)$/.exec(input)
  return cut === null ? { name: input } : { owner: cut[1], name: cut[2] }
}

/** How a definition is named in answers and in `definition=`: path:line. */
export const where = (d: Definition): string => `${d.shown}:${d.line}`

/** The definitions `definition` (path or path:line) names among `all`; INVALID_ARGUMENT naming the field when none. */
export function pickDefinitions (definition: string, all: readonly Definition[], name: string): Definition[] {
  const cut = /^(.*?)(?::(\d+))?$/.exec(definition.trim().replace(/^\.\//, '')) as RegExpExecArray
  const picked = all.filter(d => d.shown === cut[1] && (cut[2] === undefined || d.line === Number(cut[2])))
  if (picked.length > 0) return picked
  const known = all.length === 0 ? `no definition of "${name}" is indexed` : `the definitions of "${name}" are ${all.slice(0, 10).map(where).join(', ')}${all.length > 10 ? ', …' : ''}`
  throw toolError('INVALID_ARGUMENT', `definition: "${shownInput(definition, 'definition')}" names none of them: ${known}`, all.length === 0 ? `leave definition out to see every use of "${name}"` : `pass one of them, e.g. definition="${where(all[0])}"`)
}
