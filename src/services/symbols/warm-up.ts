import { symbolLanguageOf, type SymbolLanguage } from './languages.js'

// What a parser thread parses before the first outline is asked for. A fresh thread pays for starting, for the
// tree-sitter runtime's WebAssembly, for each grammar it loads, and for a first parse run by V8's baseline compiler
// (Liftoff) until the hot functions are compiled again optimized: measured on a 6,000-line C file, 115 ms for the
// first parse against 26 ms for the next, and 54 ms once a 1,000-line file of the same grammar was parsed first.
// Generated C and TypeScript warm the runtime (which every grammar shares) and the two grammars whose files run
// longest here. The C is written as kernel code is (preprocessor blocks, macros over several lines, typedefs,
// enums, unions, function pointers, attributes, labels, designated initializers) and about as long as a big file:
// a first outline of fs/namei.c (5,312 lines) took ~10 ms less after it than after 1,200 lines of plain structs and
// functions (bench section first-outline, alternated on one machine).

/** How many times each sample is parsed: the second parse runs the code the first one's calls got optimized. */
export const WARM_ROUNDS = 2

const C_UNIT = (i: number): string => `/*
 * item_${i}: a kernel-doc comment, as most C files open their functions.
 */
#include <linux/item_${i}.h>

#ifdef CONFIG_ITEM_${i}
#define ITEM_${i}_MAX (${i} * 2 + 1)
#define item_${i}_check(p, k) \\
\tdo { \\
\t\tif ((p)->key != (k)) \\
\t\t\treturn -EINVAL; \\
\t} while (0)
#else
#define ITEM_${i}_MAX 1
#endif

typedef unsigned long item_${i}_t;

enum item_${i}_state { ITEM_${i}_IDLE, ITEM_${i}_BUSY = 1 << ${i % 8}, };

union item_${i}_value {
\tlong n;
\tvoid *p;
};

struct item_${i} {
\tint key;
\tstruct item_${i} *next;
\tint (*visit)(struct item_${i} *item, void *data);
\tconst char *name;
\tunsigned int flags : 4;
};

static DEFINE_SPINLOCK(item_${i}_lock);
static LIST_HEAD(item_${i}_list);

static inline int __must_check walk_${i}(struct item_${i} *head, int key, unsigned long flags)
{
\tint n = 0, err;
\tchar buf[ITEM_${i}_MAX] = { 0 };

\tspin_lock(&item_${i}_lock);
\tfor (; head != NULL; head = head->next) {
\t\tswitch (head->key) {
\t\tcase 0:
\t\t\tcontinue;
\t\tdefault:
\t\t\tn += head->key > key ? head->key * 2 : (int)sizeof(buf);
\t\t}
\t\tif (unlikely(n < 0))
\t\t\tgoto out;
\t\terr = head->visit ? head->visit(head, buf) : -ENOENT;
\t}
out:
\tspin_unlock(&item_${i}_lock);
\tpr_debug("item_${i}: %d (%s)\\n", n, "walked");
\treturn n;
}
EXPORT_SYMBOL_GPL(walk_${i});

static const struct item_ops item_${i}_ops = {
\t.walk\t= walk_${i},
\t.name\t= "item_${i}",
};
`

const TS_UNIT = (i: number): string => `export interface Item${i} {
  key: number
  next?: Item${i}
}

export class Walker${i} {
  private readonly seen = new Map<number, string>()

  walk (head: Item${i} | undefined, key: number): number {
    let n = 0
    for (let item = head; item !== undefined; item = item.next) {
      if (item.key === key && n < ${i}) n += item.key * 2
      else this.seen.set(item.key, \`item \${item.key}\`)
    }
    return n
  }
}
`

/** The languages warmed, each with its sample (C 5,200 lines, TypeScript 400). */
export function warmSamples (): Array<{ language: SymbolLanguage, text: string }> {
  const units = (unit: (i: number) => string, n: number): string => Array.from({ length: n }, (_, i) => unit(i)).join('\n')
  return [
    { language: symbolLanguageOf('warm.c') as SymbolLanguage, text: units(C_UNIT, 80) },
    { language: symbolLanguageOf('warm.ts') as SymbolLanguage, text: units(TS_UNIT, 20) }
  ]
}
