import fc from 'fast-check'
import t from 'tap'
import { scanC } from '../../../src/services/symbols/c-source.js'
import { runs } from '../../helpers/property.js'

// The scan before C is parsed: what it rewrites (never moving a character) and the top-level braces it counts, as
// the preprocessor and ctags read them.

const blanks = (text: string): string => text.replace(/[^\n]/g, ' ')

t.test('annotation macros become spaces in code, not in directives, strings or comments', async (t) => {
  const head = 'static __always_inline __alloc_size(1) __attribute__((format(printf, 1, 2))) void *kmalloc(size_t size)'

  const { text } = scanC(`${head}\n#define __init __section(".init.text")\nchar *s = "__init"; /* __cold */\n__section(".x"\n)`)

  t.equal(text.split('\n')[0], `static ${blanks('__always_inline __alloc_size(1) __attribute__((format(printf, 1, 2)))')} void *kmalloc(size_t size)`)
  t.equal(text.split('\n').slice(1).join('\n'), '#define __init __section(".init.text")\nchar *s = "__init"; /* __cold */\n__section(".x"\n)', 'an argument list over two lines is left alone')
  t.equal(scanC('int __printf (1, 2) f(void);\n__section x;\nint __printf(1, 2').text, `int ${blanks('__printf (1, 2)')} f(void);\n__section x;\nint __printf(1, 2`, 'a blank before the arguments; none; never closed')
})

t.test('the comments of a directive become spaces: the grammar ends a #define at one', async (t) => {
  const list = '#define FLAGS\t\t\\\n\tpf(IPV6)\t/* in IPv6 mode */\t\\\n\tpf(NODE)\t/* node memory */\t\\\n\n#define REG (0x07F8 /*| OFFSET*/)\n'

  const { text } = scanC(list)

  t.equal(scanC('#define A \\\r\n\tx /* c */ \\\r\n\ty\r\n').text, `#define A \\\r\n\tx ${blanks('/* c */')} \\\r\n\ty\r\n`, 'CRLF line breaks')
  t.equal(text, `#define FLAGS\t\t\\\n\tpf(IPV6)\t${blanks('/* in IPv6 mode */')}\t\\\n\tpf(NODE)\t${blanks('/* node memory */')}\t\\\n\n#define REG (0x07F8 ${blanks('/*| OFFSET*/')})\n`)
})

t.test('a statement macro in a function body gets a ";" in the blank after its arguments', async (t) => {
  const body = (lines: string[]): string => `void f(struct se *se)\n{\n${lines.join('\n')}\n}\n`

  t.equal(scanC(body(['\tfor_each_sched_entity(se)', '\t\tcfs_rq_of(se)->skip = se;'])).text, body(['\tfor_each_sched_entity(se)', ';\tcfs_rq_of(se)->skip = se;']), 'a body on the next line')
  t.equal(scanC(body(['\tlist_for_each_entry(p, &head, node) {', '\t\tp->n = 0;', '\t}'])).text, body(['\tlist_for_each_entry(p, &head, node);{', '\t\tp->n = 0;', '\t}']), 'a braced body')
  t.equal(scanC(body(['\tfor_each_x(a) /* all */ b();', '\tfor_each_y(a)/* all */ c();'])).text, body(['\tfor_each_x(a);/* all */ b();', '\tfor_each_y(a)/* all */;c();']), 'a comment between')
  t.equal(scanC('void f(void)\n{\n\tfor_each_x(a)').text, 'void f(void)\n{\n\tfor_each_x(a)', 'at the end of the file')
  t.equal(scanC(body(['\tg(', '\t\ta) h();'])).text, body(['\tg(', '\t\ta);h();']), 'arguments over two lines')
  t.equal(scanC(body(['\tif (a)', '\t\tfor_each_cpu(c) x(c);', '\telse for_each_node(n)', '\t\ty(n);', '\tfor_each_a(a) for_each_b(b) z();'])).text,
    body(['\tif (a)', '\t\tfor_each_cpu(c);x(c);', '\telse for_each_node(n)', ';\ty(n);', '\tfor_each_a(a);for_each_b(b);z();']), 'after a condition, after else, nested')
  t.equal(scanC(body(['out:', '\tfor_each_x(a)', '\t\t*p = 0;'])).text, body(['out:', '\tfor_each_x(a)', '\t\t*p = 0;']), 'a "*" may be a product: left alone')
  const alone = [
    '\tfor_each_x(a){ b(); }', // no blank to write the `;` in
    '\tx = get(a) ;',
    '\ttypeof(*p) q = p;',
    '\tsizeof(int) ;',
    '\tcall(a)\n#ifdef B\n\tb();\n#endif',
    '\tper_cpu(v, c) = 1;',
    '\tf (a) (b);',
    '\tg /* not a call */ (a) b();'
  ]
  for (const line of alone) t.equal(scanC(body([line])).text, body([line]), line)
  t.equal(scanC('struct s {\n\tFOO(a) int b;\n};\nint x = { FOO(a) BAR(b) };\n').text, 'struct s {\n\tFOO(a) int b;\n};\nint x = { FOO(a) BAR(b) };\n', 'not in a struct or an initializer')
  t.equal(scanC(body(['\tfor_each_x(a)', '\t\tb();']), false).text, body(['\tfor_each_x(a)', '\t\tb();']), 'C++: left alone')
})

t.test('a do-block ended by a macro instead of while loses its do', async (t) => {
  const body = (lines: string[]): string => `int f(struct t *t)\n{\n${lines.join('\n')}\n}\n`

  t.equal(scanC(body(['\tdo {', '\t\tn++;', '\t} while_each_thread(g, t);'])).text, body(['\t   {', '\t\tn++;', '\t} while_each_thread(g, t);']))
  for (const kept of [['\tdo {', '\t\tn++;', '\t} while (0);'], ['\tdo {', '\t\tif (a) { b(); }', '\t} while(n--);'], ['\tdo n++; while (n < 3);'], ['\tdo {', '\t}']]) {
    t.equal(scanC(body(kept)).text, body(kept), kept.join(' '))
  }
})

t.test('top-level braces: where each closes, and whether a ")" comes before it', async (t) => {
  const text = 'int f(void)\n{\n\tif (a) { b(); }\n}\nstruct s { int a; };\nint x[] = { 1, \'}\', 3 };\n"}" }\nint g(void) {\n'

  const scanned = scanC(text)

  t.same(scanned.opens.map(o => text.slice(0, o).split('\n').length), [2, 5, 6, 8], 'the lines of each top-level "{"; a stray "}" and those in strings are not counted')
  t.same(scanned.closes.map(c => c === -1 ? -1 : text.slice(0, c).split('\n').length), [4, 5, 6, -1], 'the last one never closes')
  t.same(scanned.afterParen, [true, false, false, true])
  t.same(scanned.semicolons.map(c => text.slice(0, c).split('\n').length), [5, 6], 'top-level ";" only')

  const guarded = '#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void) { }\n#ifdef __cplusplus\n}\n#endif\n'
  t.same(scanC(guarded).opens, [guarded.indexOf('{ }')], 'extern "C" { … } holds top-level code')
})

t.test('#if branches: the first one counts; #if 0 is passed over, as ctags does', async (t) => {
  const alternatives = '#ifdef A\nint f(int a) {\n#else\nint f(void) {\n#endif\n\treturn 0;\n}\nint g(void) { }\n'
  const scanned = scanC(alternatives)
  const line = (offset: number): number => alternatives.slice(0, offset).split('\n').length
  t.same(scanned.opens.map(line), [2, 4, 8])
  t.same(scanned.closes.map(c => c === -1 ? -1 : line(c)), [7, -1, 8], 'the first branch\'s "{" is closed; the other one never is')

  const closed = '#ifdef A\nint f(void) {\n\treturn 1; }\n#else\n\treturn 2; }\n#endif\n'
  t.same(scanC(closed).closes, [closed.indexOf('}')], 'a "}" in the first branch is the one')

  const zero = '# if 0 /* old */\nint f(void) {\n#if A\n}\n#endif\n#elif B\nint g(void) { }\n#endif\n#if 0\n{\n#endif\nint h(void) { }\n'
  const dead = scanC(zero)
  t.same(dead.opens.map(o => zero.slice(o - 12, o - 1)), ['int g(void)', 'int h(void)'], 'nothing in #if 0 counts, nested #if included')
  t.same(dead.skipped, [0, zero.indexOf('#elif'), zero.indexOf('#if 0\n{'), zero.indexOf('int h') - 1])

  const open = '#ifdef BIG\nstatic u32 lower(u32 x)\n#else /* little */\nstatic u32 upper(u32 x)\n#elif X\nint y;\n#endif\n{\n}\n'
  const first = scanC(open)
  t.equal(first.text, `#ifdef BIG\nstatic u32 lower(u32 x)\n${blanks('#else /* little */\nstatic u32 upper(u32 x)\n#elif X\nint y;\n')}#endif\n{\n}\n`, 'a head left open by the first branch: the others are blank')
  t.same(first.skipped, [open.indexOf('#else'), open.indexOf('{') - 1])
  const complete = '#ifdef A\nextern int f(void);\n#else\nstatic inline int f(void) { return 0; }\n#endif\n'
  t.equal(scanC(complete).text, complete, 'a first branch that ends its declaration: every branch stays')

  const unbalanced = scanC('#endif\n#else\nint f(void) { }\n')
  t.same(unbalanced.closes.length, 1, 'a stray #else or #endif changes nothing')
})

t.test('a top-level macro invocation on a line of its own is loose; a head over #else branches is not', async (t) => {
  const loose = 'NOKPROBE_SYMBOL(f)\n\nstatic int g(void) { }\nBTF_SET_START(s)\n#include "x.h"\nBTF_SET_END(s)\nvoid h(void) { }\nEXPORT_SYMBOL(h);\nFOO(a) int b;\nstatic DEF_SCSI_QCMD(q)\nstatic int i(void) { }\n'
  const spans = scanC(loose).loose
  t.same(Array.from({ length: spans.length / 2 }, (_, k) => loose.slice(spans[2 * k], spans[2 * k + 1])), ['NOKPROBE_SYMBOL(f)', 'BTF_SET_START(s)', 'BTF_SET_END(s)', 'static DEF_SCSI_QCMD(q)'])

  const old = 'f(a, b)\n/* the arguments */\nint a;\nchar *b;\n{\n}\nPAGEFLAG(Dirty, dirty)\nint g;\nH(a)\nint a = 1;\n{ }\n'
  const scanned = scanC(old)
  t.same(scanned.oldStyle, [0, old.indexOf('{')], 'an old-style head is not loose: its body follows its declarations')
  t.same(scanned.afterParen, [true, false])
  t.same(scanned.loose, [old.indexOf('PAGEFLAG'), old.indexOf(')\nint g') + 1, old.indexOf('H(a)'), old.indexOf('H(a)') + 4], 'names only, then declarations: not an initialised one')

  const continued = 'FOO(x)\n#define A \\\n\t1\nint g;\nBAR(y)\n#define B \\'
  t.same(scanC(continued).loose, [0, 6], 'past a directive continued over lines; up to a directive at the end')

  const heads = '#ifdef A\nSYSCALL_DEFINE1(clone, int, a)\n#else\nSYSCALL_DEFINE1(clone, long, a)\n#endif\n{\n}\nSYSCALL_DEFINE0(getpid)\n{\n}\n'
  t.same(scanC(heads).loose, [])
  t.same(scanC(heads).afterParen, [true, true])
})

t.test('comments, strings and characters hide what is in them', async (t) => {
  t.same(scanC('int f(void) { } // the end').closes, [14], 'a line comment ends the file')
  const text = 'int f(void) // a comment \\\n { continued\n{\n\tchar c = \'{\', *s = "}\\"}";\n\tchar *u = "{\n\t/* } */ return 0;\n}\n/* never closed {'

  const scanned = scanC(text)

  t.same(scanned.opens, [text.indexOf('{\n\tchar')])
  t.same(scanned.closes, [text.lastIndexOf('}\n/*')])
})

t.test('whatever the text, the rewrite keeps its length and line breaks, and the braces are in order', async (t) => {
  const alphabet = ['{', '}', '(', ')', ';', ':', '#', '\n', ' ', '\t', '/', '*', '"', '\'', '\\', 'if ', 'do ', 'while', 'else ', 'for_each(x)', '__init ', '__printf(1)', 'f', '0', '#if 0\n', '#else\n', '#endif\n', '#define A ', '\r']
  fc.assert(fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 80 }), fc.boolean(), (parts, statements) => {
    const source = parts.join('')
    const scanned = scanC(source, statements)
    const breaks = (s: string): string => s.replace(/[^\r\n]/g, '.')
    return scanned.text.length === source.length && breaks(scanned.text) === breaks(source) &&
      scanned.opens.every((open, k) => (k === 0 || open > scanned.opens[k - 1]) && (scanned.closes[k] === -1 || scanned.closes[k] > open))
  }), runs(300))
  t.pass('length, line breaks and brace order kept')
})
