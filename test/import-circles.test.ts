import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import ts from 'typescript'

// No module of the server imports, even for a type or through a dynamic import(), a module that imports it back:
// shared types live in leaf files (engine-state.ts, method-types.ts, entry-types.ts, walk-types.ts …), so each
// folder reads bottom-up. Every relative specifier TypeScript's pre-processor finds counts.

const ROOTS = ['src']

function sources (dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sources(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : []
  })
}

/** Each module's relative imports (static, type-only, re-exports, dynamic), as module paths. */
function importGraph (files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(read(file), true, true)
    const targets = importedFiles
      .filter(ref => ref.fileName.startsWith('.'))
      .map(ref => path.join(path.dirname(file), ref.fileName).replace(/\.js$/, '.ts'))
      .map(target => known.has(target) ? target : target.replace(/\.ts$/, '/index.ts'))
      .filter(target => known.has(target))
    graph.set(file, targets)
  }
  return graph
}

/** The groups of modules that reach each other (Tarjan's strongly connected components of more than one module, or one importing itself). */
function circles (graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v) as number)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
      }
    }
    if (low.get(v) !== index.get(v)) return
    const group: string[] = []
    let w: string
    do {
      w = stack.pop() as string
      onStack.delete(w)
      group.push(w)
    } while (w !== v)
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

t.test('the circle finder sees type-only, re-exported and dynamic imports', async (t) => {
  const texts: Record<string, string> = {
    'a.ts': "import type { B } from './b.js'\n",
    'b.ts': "export type { C } from './c.js'\n",
    'c.ts': "const a = await import('./a.js')\n",
    'd.ts': "import { x } from './e/index.js'\n",
    'e/index.ts': "import { y } from '../d.js'\n",
    'f.ts': "import { z } from 'node:fs'\nimport { a } from './a.js'\n"
  }
  t.same(circles(importGraph(Object.keys(texts), file => texts[file])), [['a.ts', 'b.ts', 'c.ts'], ['d.ts', 'e/index.ts']])
})

t.test('no import circle in src/, type-only ones included', async (t) => {
  const files = ROOTS.flatMap(sources)
  t.ok(files.length > 100, 'the tree was read')
  t.same(circles(importGraph(files, file => fs.readFileSync(file, 'utf8'))), [])
})
