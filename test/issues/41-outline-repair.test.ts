import fc from 'fast-check'
import t from 'tap'
import { buildOutline, type OutlineSymbol } from '../../src/services/symbols/outline.js'
import { symbolLanguageOf, type SymbolLanguage } from '../../src/services/symbols/languages.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { parserHandler } from '../../src/services/symbols/parse-handler.js'
import { chunkFile } from '../../src/services/code-index/chunker.js'
import { runs } from '../helpers/property.js'

// Issue 41: C definitions that tree-sitter's error recovery let swallow what follows them. Each fixture is a small
// reproduction of a shape found in Linux 6.1 (written for this test, not copied), with the line ranges and owners
// ctags gives for it. The parsing thread's handler runs on the test's own thread (coverage counts no worker thread).

const parse = parserHandler(locateTreeSitter() as TreeSitterLocation)
const C = symbolLanguageOf('a.c') as SymbolLanguage

async function outline (source: string, { grammar, query, dialect } = C): Promise<OutlineSymbol[]> {
  return buildOutline((await parse({ grammar, query, text: source, dialect })).definitions, source.split('\n'))
}
const shown = (symbols: OutlineSymbol[]): string[] => symbols.map(s => `${s.line}-${s.endLine} ${s.kind} ${s.container === undefined ? '' : `${s.container}.`}${s.name}`)

t.test('kernel/sched/fair.c: a body that is one brace-less for_each_*(…) statement ends at its own "}"', async (t) => {
  const source = [
    'static void set_next(struct entity *se)', //  1
    '{',
    '\tfor_each_entity(se) {',
    '\t\tif (is_idle(se))',
    '\t\t\treturn;',
    '\t\trq_of(se)->next = se;',
    '\t}',
    '}',
    '',
    'static void set_skip(struct entity *se)', // 10
    '{',
    '\tfor_each_entity(se)',
    '\t\trq_of(se)->skip = se;',
    '}',
    '',
    'static struct task *pick_next(struct rq *rq)', // 16
    '{',
    '\treturn NULL;',
    '}',
    ''
  ].join('\n')

  t.same(shown(await outline(source)), ['1-8 function set_next', '10-14 function set_skip', '16-19 function pick_next'])
})

t.test('the chunks search_code ranks are cut at the repaired lines, one per function', async (t) => {
  const fn = (name: string, body: string[]): string[] => [`static void ${name}(struct entity *se)`, '{', ...body, ...Array.from({ length: 12 }, (_, i) => `\tse->n${i} = ${i};`), '}', '']
  const lines = [...fn('first', []), ...fn('skip', ['\tfor_each_entity(se)', '\t\trq_of(se)->skip = se;']), ...fn('last', [])]

  const chunks = chunkFile(lines, await outline(lines.join('\n')))

  t.same(chunks.map(c => `${c.start}-${c.end} ${c.symbol}`), ['1-15 first', '17-33 skip', '35-49 last'])
})

t.test('mm/page_alloc.c: iterator macros, braced and not, nested, do not make the function own the rest', async (t) => {
  const source = [
    'void show_free(unsigned int filter, int max_zone)', // 1
    '{',
    '\tunsigned long free = 0;',
    '\tint cpu;',
    '',
    '\tfor_each_populated_zone(zone) {',
    '\t\tif (zone_idx(zone) > max_zone)',
    '\t\t\tcontinue;',
    '\t\tfor_each_online_cpu(cpu)',
    '\t\t\tfree += per_cpu(zone, cpu)->count;',
    '\t}',
    '\tprintk("free:%lu\\n", free);',
    '}',
    '',
    'static int __init setup_zones(char *s)', // 15
    '{',
    '\treturn 0;',
    '}',
    'early_param("zones", setup_zones);',
    '',
    'void __init get_range(unsigned int nid, unsigned long *start)', // 21
    '{',
    '\tfor_each_mem_range(i, nid, start, NULL) {',
    '\t\t*start = min(*start, i);',
    '\t}',
    '}'
  ].join('\n')

  t.same(shown(await outline(source)), ['1-13 function show_free', '15-18 function setup_zones', '21-26 function get_range'])
})

t.test('net/core/pktgen.c: a #define list of pf(X) invocations with comments is one macro, not a function to the end of the file', async (t) => {
  const source = [
    '#define PKT_FLAGS\t\t\t\\', // 1
    '\tpf(IPV6)\t/* IPv6 mode */\t\\',
    '\tpf(IPSRC_RND)\t/* random source */\t\\',
    '\tpf(NODE)\t/* node memory */\t\\',
    '',
    '#define pf(flag)\t\tflag##_SHIFT,', // 6
    'enum pkt_flags {',
    '\tPKT_FLAGS',
    '};',
    '#undef pf',
    '',
    'static int pktgen_if_show(struct seq_file *seq, void *v)', // 12
    '{',
    '\treturn 0;',
    '}'
  ].join('\n')

  // The last backslash continues the macro onto the empty line 5, as the preprocessor (and ctags: 185-204) reads it.
  t.same(shown(await outline(source)), ['1-5 macro PKT_FLAGS', '6-6 macro pf', '7-9 enum pkt_flags', '12-15 function pktgen_if_show'])
})

t.test('mm/page_alloc.c (__show_free_areas): after braced and brace-less iterator macros the function does not own the ones after it', async (t) => {
  const source = [
    'void show_free(unsigned int filter, int max_zone)', // 1
    '{',
    '\tunsigned long free = 0;',
    '\tint cpu;',
    '',
    '\tfor_each_populated_zone(zone) {',
    '\t\tif (zone_idx(zone) > max_zone)',
    '\t\t\tcontinue;',
    '',
    '\t\tfor_each_online_cpu(cpu)',
    '\t\t\tfree += per_cpu(zone, cpu)->count;',
    '\t}',
    '',
    '\tfor_each_populated_zone(zone) {',
    '\t\tint i;',
    '',
    '\t\tprintk("lowmem_reserve[]:");',
    '\t\tfor (i = 0; i < MAX_NR_ZONES; i++)',
    '\t\t\tprintk(KERN_CONT " %ld", zone->lowmem_reserve[i]);',
    '\t\tprintk(KERN_CONT "\\n");',
    '\t}',
    '',
    '\tfor_each_node_state(n, N_MEMORY) {',
    '\t\tif (val < min_val)',
    '\t\t\tmin_val = val;',
    '\t}',
    '\tzonerefs->zone = NULL;',
    '}',
    '',
    'static void build_all(void *data)', // 30
    '{',
    '\tlocal_irq_restore(flags);',
    '}',
    '',
    'static noinline void __init', // 35
    'build_all_init(void)',
    '{',
    '\tcpuset_init();',
    '}'
  ].join('\n')

  // Read as the grammar recovers from it, show_free ran over 1-39 and owned both functions after it.
  t.same(shown(await outline(source)), ['1-28 function show_free', '30-33 function build_all', '35-39 function build_all_init'])
})

t.test('net/core/pktgen.c (pf(IPV6)): a commented #define list before a struct does not become a function owning the rest', async (t) => {
  const source = [
    '#define PKT_FLAGS\t\t\t\t\\', // 1
    ...['IPV6', 'IPSRC_RND', 'IPDST_RND', 'TXSIZE_RND', 'UDPSRC_RND', 'UDPDST_RND'].map((flag, i) => `\tpf(${flag})\t\t/* flag ${i} */\t\t\\`),
    '',
    '#define pf(flag)\t\tflag##_SHIFT,', // 9
    'enum pkt_flags {',
    '\tPKT_FLAGS',
    '};',
    '#undef pf',
    '',
    'struct pktgen_dev {', // 15
    '\t/*',
    '\t * frequent and infrequent fields apart',
    '\t */',
    '\tstruct proc_dir_entry *entry;\t/* proc file */',
    '\tstruct pktgen_thread *pg_thread;/* the owner */',
    '\tstruct list_head list;\t/* run-queue */',
    '\tstruct rcu_head\t rcu;\t/* freed by RCU */',
    '\twait_queue_head_t queue;',
    '};',
    '',
    'static ssize_t pgctrl_write(struct file *file, const char __user *buf,', // 26
    '\t\t\t    size_t count, loff_t *ppos)',
    '{',
    '\tchar data[128];',
    '\tstruct pktgen_net *pn = net_generic(current->nsproxy->net_ns, pg_net_id);',
    '',
    '\treturn count;',
    '}',
    '',
    'static int pgctrl_open(struct inode *inode, struct file *file)', // 35
    '{',
    '\treturn single_open(file, pgctrl_show, NULL);',
    '}'
  ].join('\n')

  // Read as the grammar recovers from it, pf was a function over 3-38 owning the struct and both functions.
  t.same(shown(await outline(source)), ['1-8 macro PKT_FLAGS', '9-9 macro pf', '10-12 enum pkt_flags', '15-24 struct pktgen_dev', '26-33 function pgctrl_write', '35-38 function pgctrl_open'])
})

t.test('more kernel shapes: do … while_each_thread, macro-made functions, unknown annotations, a body the grammar cannot read', async (t) => {
  const source = [
    'int attach_task(struct cgroup *dst, struct task_struct *leader)', // 1
    '{',
    '\tdo {',
    '\t\tadd_src(task);',
    '\t} while_each_thread(leader, task);',
    '\treturn 0;',
    '}',
    'SYSCALL_DEFINE0(getpid)', // 8
    '{',
    '\treturn tgid(current);',
    '}',
    'SYSCALL_DEFINE1(umask, int, mask)', // 12
    '{',
    '\treturn mask;',
    '}',
    'static enum flags __init_memblock', // 16
    'choose_flags(void)',
    '{',
    '\treturn 0;',
    '}',
    'NOKPROBE_SYMBOL(choose_flags)', // 21
    '',
    'static u64 run(u64 *regs)', // 23
    '{',
    '#define ALU(OP, X) case OP: x = x X y; break;',
    '\tswitch (op) {',
    '\tALU(ADD, +)',
    '\tALU(SUB, -)',
    '#undef ALU',
    '\t}',
    '\treturn 0;',
    '}',
    '#ifdef CONFIG_BACKWARDS', // 33
    'SYSCALL_DEFINE2(clone, unsigned long, flags, int, tls)',
    '#else',
    'SYSCALL_DEFINE2(clone, int, tls, unsigned long, flags)',
    '#endif',
    '{',
    '\treturn 0;',
    '}',
    'extern size_t real_strnlen(const char *, size_t) __RENAME(strnlen);', // 41
    '__FORTIFY_INLINE size_t strnlen(const char *p, size_t maxlen)',
    '{',
    '\treturn 0;',
    '}',
    'BTF_SET_START(hooks)', // 46
    'BTF_ID(func, bpf_lsm_sk_alloc)',
    'BTF_SET_END(hooks)',
    '',
    'void find_shim(const struct bpf_prog *prog)', // 50
    '{',
    '\treturn;',
    '}',
    'static inline void (*read_vector(uint width))(void __iomem *, ulong *)', // 54
    '{',
    '\treturn NULL;',
    '}',
    'int (atomic_read)(const atomic_t *v) { return v->counter; }', // 58
    'static inline void NORETURN PRINTF(1, 2) die(const char *str, ...)', // 59
    '{',
    '\texit(1);',
    '}',
    '#define REG_SPU (0x9050 /*| REG_OFFSET*/)', // 63
    'static _bsc0(char *, getserialnum)',
    'static DEF_SCSI_QCMD(blogic_qcmd)',
    '',
    'void __init init_ucsimm(char *command, int size)', // 67
    '{',
    '\tcommand[0] = 0;',
    '}'
  ].join('\n')

  t.same(shown(await outline(source)), [
    '1-7 function attach_task',
    '8-11 function SYSCALL_DEFINE0',
    '12-15 function SYSCALL_DEFINE1',
    '16-20 function choose_flags',
    '23-32 function run',
    '25-25 macro run.ALU',
    '34-40 function SYSCALL_DEFINE2',
    '42-45 function strnlen',
    '50-53 function find_shim',
    '54-57 function read_vector',
    '58-58 function atomic_read',
    '59-62 function die',
    '63-63 macro REG_SPU',
    '67-70 function init_ucsimm'
  ])
})

t.test('a header guarded for C++ (extern "C" { … }) keeps its functions; in #if 0 the reading of the grammar stands, less the statements it misread', async (t) => {
  const source = [
    '#ifdef __cplusplus', // 1
    'extern "C" {',
    '#endif',
    'static inline int first(void)', // 4
    '{',
    '\treturn 1;',
    '}',
    '#if 0', // 8
    'static struct window *find_window(struct iommu *iommu)',
    '{',
    '\tlist_for_each_entry(window, &iommu->windows, list) {',
    '\t\tif (window->offset == 0)',
    '\t\t\treturn window;',
    '\t}',
    '\treturn NULL;',
    '}',
    '#endif',
    'static int irq(int status)', // 18
    '{',
    '\tif (status & 1) {',
    '\t\tack();',
    '\t}',
    '#if 0',
    '\telse if (status & 2) {',
    '\t\tdone();',
    '\t}',
    '#endif',
    '\treturn 0;',
    '}',
    '#ifdef __cplusplus',
    '}',
    '#endif'
  ].join('\n')

  t.same(shown(await outline(source)), ['4-7 function first', '9-16 function find_window', '18-29 function irq'])
})

t.test('a head over #if branches is read in its first, as ctags reads it', async (t) => {
  const source = [
    '#ifdef SNDRV_BIG_ENDIAN', // 1
    'static u32 LowerWordSwap(u32 swappee)',
    '#else',
    'static u32 UpperWordSwap(u32 swappee)',
    '#endif',
    '{',
    '\treturn swappee;',
    '}',
    'static void', // 9
    '#ifdef HFC_REGISTER_DEBUG',
    'HFC_outb_pcimem(struct hfc_multi *hc, u_char reg, const char *function)',
    '#else',
    '\tHFC_outb_pcimem(struct hfc_multi *hc, u_char reg)',
    '#endif',
    '{',
    '}',
    'static inline', // 17
    'typeof(qla27xx_fwdt_entry_call->call)(qla27xx_find_entry(uint type))',
    '{',
    '\treturn NULL;',
    '}'
  ].join('\n')

  t.same(shown(await outline(source)), ['2-8 function LowerWordSwap', '11-16 function HFC_outb_pcimem', '18-21 function qla27xx_find_entry'])
})

t.test('an old-style head with no type (arch/parisc/math-emu): named and ended as ctags does', async (t) => {
  const source = [
    'int',
    'dbl_fmpyfadd(dbl_floating_point *src1ptr, unsigned int *status)', // 2
    '{',
    '\treturn 0;',
    '}',
    '',
    '/*',
    ' *  Double Floating-point Multiply Negate Fused Add',
    ' */',
    '',
    'dbl_fmpynfadd(src1ptr,status)', // 11
    '',
    'dbl_floating_point *src1ptr;',
    'unsigned int *status;',
    '{',
    '\treturn(NOEXCEPTION);',
    '}',
    'NOKPROBE_SYMBOL(dbl_fmpynfadd)',
    'int after(void) { return 1; }' // 19
  ].join('\n')

  t.same(shown(await outline(source)), ['1-5 function dbl_fmpyfadd', '11-17 function dbl_fmpynfadd', '19-19 function after'])
})

// Top-level C made of the shapes above in any order and number: every function is found with its exact lines, none
// is owned by another, and every symbol lies inside its owner.
const SHAPES: Array<(n: number) => { lines: string[], functions: Array<[string, number, number]> }> = [
  (n) => ({ lines: [`static int plain${n}(int a)`, '{', '\treturn a;', '}'], functions: [[`plain${n}`, 1, 4]] }),
  (n) => ({ lines: ['static void', `split${n}(struct s *s)`, '{', '\ts->a = 0;', '}'], functions: [[`split${n}`, 1, 5]] }),
  (n) => ({ lines: [`static void skip${n}(struct se *se)`, '{', '\tfor_each_entity(se)', '\t\trq_of(se)->skip = se;', '}'], functions: [[`skip${n}`, 1, 5]] }),
  (n) => ({ lines: [`void zones${n}(void)`, '{', '\tfor_each_zone(z) {', '\t\tfor_each_cpu(c)', '\t\t\tn += count(z, c);', '\t}', '}'], functions: [[`zones${n}`, 1, 7]] }),
  (n) => ({ lines: [`int each${n}(struct t *t)`, '{', '\tdo {', '\t\tn++;', '\t} while_each_thread(g, t);', '\treturn n;', '}'], functions: [[`each${n}`, 1, 7]] }),
  (n) => ({ lines: [`#define FLAGS${n}\t\\`, '\tpf(A)\t/* a */\t\\', '\tpf(B)\t/* b */\t\\', '', `enum flags${n} {`, `\tFLAGS${n}`, '};'], functions: [] }),
  () => ({ lines: ['SYSCALL_DEFINE1(umask, int, mask)', '{', '\treturn mask;', '}'], functions: [['SYSCALL_DEFINE1', 1, 4]] }),
  (n) => ({ lines: [`NOKPROBE_SYMBOL(f${n})`, '', `static int probe${n}(void)`, '{', '\treturn 0;', '}'], functions: [[`probe${n}`, 3, 6]] }),
  (n) => ({ lines: [`static int alu${n}(int op)`, '{', '\tswitch (op) {', '\tALU(ADD, +)', '\tALU(SUB, -)', '\t}', '\treturn 0;', '}'], functions: [[`alu${n}`, 1, 8]] }),
  (n) => ({ lines: [`struct s${n} {`, '\tint a;', '};'], functions: [] })
]

t.test('any sequence of those shapes: exact function lines, no function owned by a function, children inside owners', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(fc.nat(SHAPES.length - 1), { minLength: 1, maxLength: 8 }), async (picks) => {
    const lines: string[] = []
    const expected: string[] = []
    picks.forEach((pick, n) => {
      const shape = SHAPES[pick](n)
      for (const [name, first, last] of shape.functions) expected.push(`${lines.length + first}-${lines.length + last} function ${name}`)
      lines.push(...shape.lines, '')
    })
    const symbols = await outline(lines.join('\n'))
    const owners: OutlineSymbol[] = []
    const nested = symbols.every(s => {
      owners.length = s.depth - 1
      const owner = owners.at(-1)
      owners.push(s)
      return owner === undefined || (owner.line <= s.line && s.endLine <= owner.endLine && !(s.kind === 'function' && owner.kind === 'function'))
    })
    return nested && shown(symbols.filter(s => s.kind === 'function')).join('\n') === expected.join('\n')
  }), runs(60))
  t.pass('every generated file outlined exactly')
})
