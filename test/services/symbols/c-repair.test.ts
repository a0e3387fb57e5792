import t from 'tap'
import { checkAgainstBraces, mergeReparsed, reparseText, type FoundDefinition } from '../../../src/services/symbols/c-repair.js'
import { scanC } from '../../../src/services/symbols/c-source.js'

// The check of a tree's C definitions against the file's braces, on definitions written by hand: the shapes a real
// tree rarely gives (the parser's own are in test/issues/41-outline-repair.test.ts).

const rowOf = (text: string, at: number): number => text.slice(0, at).split('\n').length - 1

/** A definition of `text`: it starts at `head`, is named at `name`, has its body at `body` and ends at `to`. */
function found (text: string, kind: string, head: string, name: string, body?: string, to?: number): FoundDefinition {
  const from = text.indexOf(head)
  const nameAt = text.indexOf(name, from)
  const open = body === undefined ? undefined : text.indexOf(body, nameAt)
  const end = to ?? (open === undefined ? text.indexOf('\n', from) : text.indexOf('}', open) + 1)
  return {
    kind,
    name,
    start: rowOf(text, from),
    nameRow: rowOf(text, nameAt),
    nameAt,
    end: rowOf(text, end),
    endColumn: end - text.lastIndexOf('\n', end - 1) - 1,
    from,
    to: end,
    ...(open === undefined ? {} : { body: open })
  }
}

t.test('a function ending elsewhere than its body\'s "}" is set to it, and the file is read again', async (t) => {
  const text = 'int f(void)\n{\n\treturn 0;\n}\nint g(void)\n{\n}\n'
  const swallowing = found(text, 'function', 'int f', 'f', '{', text.length - 1)

  const check = checkAgainstBraces([swallowing], scanC(text))

  t.equal(check.broken, true)
  t.match(check.kept, [{ name: 'f', from: 0, to: text.indexOf('}') + 1, end: 3, endColumn: 1 }])
})

t.test('two heads for one body: the nearer one is the function, whichever comes first', async (t) => {
  const text = 'FOO(a) int f(void)\n{\n}\n'
  const far = found(text, 'function', 'FOO', 'FOO', '{')
  const near = found(text, 'function', 'int f', 'f', '{')

  t.same(checkAgainstBraces([far, near], scanC(text)).kept.map(d => d.name), ['f'])
  t.same(checkAgainstBraces([near, far], scanC(text)).kept.map(d => d.name), ['f'])
})

t.test('what the braces cannot judge is kept as the tree has it; what they contradict is not', async (t) => {
  const dead = '#if 0\nint old(void) { x(; }\n#endif\nint f(void)\n{\n}\n'
  const old = found(dead, 'function', 'int old', 'old', '{')
  t.same(checkAgainstBraces([old], scanC(dead)).kept, [old], 'a function in #if 0')
  t.equal(checkAgainstBraces([old], scanC(dead)).broken, true, 'f has no function')

  const nested = 'void f(void)\n{\n\tfor_each(x) {\n\t}\n}\n'
  const inside = found(nested, 'function', 'for_each', 'for_each', '{')
  t.same(checkAgainstBraces([found(nested, 'function', 'void f', 'f', '{', nested.lastIndexOf('}') + 1), inside], scanC(nested)).kept.map(d => d.name), ['f'], 'a "function" inside a body')

  const uncounted = '#if A\n{\n#endif\nint f(void) { return 0; }\n'
  const f = found(uncounted, 'function', 'int f', 'f', '{ return')
  t.match(checkAgainstBraces([f], scanC(uncounted)), { kept: [f], broken: true, unclaimed: [] }, 'a body the count does not see as top-level')
})

t.test('a struct, union or type the grammar ran on into a function is ended by the braces, and the file read again', async (t) => {
  const text = 'union tag {\n\tstruct a {\n\t\tBITS(x:1,\n\t\t;))\n\t} a;\n};\ntypedef struct {\n\tint b;\n} b_t;\nstruct c { int c; };\nint f(void)\n{\n}\n'
  const runOn = (kind: string, head: string, name: string): FoundDefinition => found(text, kind, head, name, undefined, text.length - 1)
  const f = found(text, 'function', 'int f', 'f', '{\n}')

  const check = checkAgainstBraces([runOn('struct', 'struct a', 'a'), runOn('type', 'typedef', 'b_t'), runOn('struct', 'struct c', 'c'), f], scanC(text))

  t.equal(check.broken, true)
  t.same(check.kept.map(d => `${d.kind} ${d.name} ${d.start + 1}-${d.end + 1}:${d.endColumn}`), ['struct a 2-6:1', 'type b_t 7-9:6', 'struct c 10-10:19', 'function f 11-13:1'],
    'inside a block: to its "}"; a typedef: to the ";" after its own; a struct: to its own "}"')
  t.same(mergeReparsed([], [runOn('struct', 'struct c', 'c'), f], scanC(text)).map(d => `${d.name} ${d.end + 1}`), ['c 10', 'f 13'], 'read again, the same')

  const macro = '#define TIME(A, STR) \\\n\nint main(void)\n{\n}\n#define LAST \\\nint g(void) { }'
  const time = found(macro, 'macro', '#define TIME', 'TIME', undefined, macro.indexOf('{'))
  const last = found(macro, 'macro', '#define LAST', 'LAST', undefined, macro.length)
  const kept = checkAgainstBraces([time, found(macro, 'function', 'int main', 'main', '{'), last, found(macro, 'function', 'int g', 'g', '{ }')], scanC(macro)).kept
  t.same(kept.filter(d => d.kind === 'macro').map(d => `${d.name} ${d.start + 1}-${d.end + 1}`), ['TIME 1-2', 'LAST 6-7'], 'a macro ends with its logical line, the empty one a "\\" continues included')
})

t.test('a head starts after the top-level ";" before it, past blanks and comments; an old-style head is left alone', async (t) => {
  const text = 'extern int real(int) RENAME(x);\n/* fortified */\nINLINE int x(int a)\n{\n}\n'
  const kept = checkAgainstBraces([found(text, 'function', 'extern', 'x(int a)', '{')], scanC(text)).kept

  t.match(kept, [{ from: text.indexOf('INLINE'), start: 2, nameRow: 2 }])

  const old = 'int f(a)\n\tint a;\n{\n}\n'
  const knr = found(old, 'function', 'int f', 'f', '{')
  t.same(checkAgainstBraces([knr], scanC(old)).kept, [knr])
})

t.test('read again: bodies and loose invocations blank; what was in a body kept; a body with no name in its head stays nameless', async (t) => {
  const text = 'NOKPROBE_SYMBOL(f)\nint f(void)\n{\n#define LOCAL 1\n}\nstruct p origin = (struct p){ 0 };\n'
  const source = scanC(text)
  const first = [found(text, 'function', 'int f', 'f', '{'), found(text, 'macro', '#define', 'LOCAL')]

  t.equal(reparseText(first, source), `${' '.repeat('NOKPROBE_SYMBOL(f)'.length)}\nint f(void)\n{\n${' '.repeat('#define LOCAL 1'.length)}\n}\nstruct p origin = (struct p){   };\n`)
  const again = [found(text, 'function', 'int f', 'f', '{')]
  t.same(mergeReparsed(first, again, source).map(d => `${d.kind} ${d.name}`), ['function f', 'macro LOCAL'], 'no function made of the literal')

  const overlapping = '#ifdef A\nint f(void) {\n#else\nint h;\nFOO(x)\nint g;\n#endif\n}\n'
  const scanned = scanC(overlapping)
  t.equal(scanned.loose.length, 2)
  t.equal(reparseText([found(overlapping, 'function', 'int f', 'f', '{')], scanned).length, overlapping.length, 'a loose invocation inside a body counted from another branch')
})
