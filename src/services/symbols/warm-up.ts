import { symbolLanguageOf, type SymbolLanguage } from './languages.js'

// What a parser thread parses before the first outline is asked for. A fresh thread pays for starting, for the
// tree-sitter runtime's WebAssembly, for each grammar it loads, and for a first parse run by V8's baseline compiler
// (Liftoff) until the hot functions are compiled again optimized: measured on a 6,000-line C file, 115 ms for the
// first parse against 26 ms for the next, and 54 ms once a 1,000-line file of the same grammar was parsed first. A
// few hundred generated lines of C and of TypeScript warm the runtime (which every grammar shares) and the two
// grammars whose files run longest here.

/** How many times each sample is parsed: the second parse runs the code the first one's calls got optimized. */
export const WARM_ROUNDS = 2

const C_UNIT = (i: number): string => `struct item_${i} {
\tint key;
\tstruct item_${i} *next;
};

#define ITEM_${i}_MAX (${i} * 2 + 1)

static int walk_${i}(struct item_${i} *head, int key)
{
\tint n = 0;

\tfor (; head != NULL; head = head->next) {
\t\tif (head->key == key && n < ITEM_${i}_MAX)
\t\t\tn += head->key * 2;
\t\telse
\t\t\tbreak;
\t}
\treturn n;
}
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

/** The languages warmed, each with its sample (about 400 lines). */
export function warmSamples (): Array<{ language: SymbolLanguage, text: string }> {
  const units = (unit: (i: number) => string, n: number): string => Array.from({ length: n }, (_, i) => unit(i)).join('\n')
  return [
    { language: symbolLanguageOf('warm.c') as SymbolLanguage, text: units(C_UNIT, 60) },
    { language: symbolLanguageOf('warm.ts') as SymbolLanguage, text: units(TS_UNIT, 20) }
  ]
}
