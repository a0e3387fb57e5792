import fs from 'node:fs'
import t from 'tap'
// @ts-expect-error -- a plain ES module script without types
import { ARCHITECTURE_FILE, withCurrentTable } from '../../scripts/architecture.mjs'

// docs/architecture.md follows the code: its folder table is what the tree holds now, and every engine module
// the page names exists.

const page = fs.readFileSync(ARCHITECTURE_FILE as string, 'utf8')

t.test('the folder table is the tree\'s own (node scripts/architecture.mjs rewrites it)', async (t) => {
  t.equal(page, (withCurrentTable as (page: string) => string)(page))
})

t.test('every engine module the page names is in src/mcp, and every one there is named', async (t) => {
  const engine = page.slice(page.indexOf('## The engine'))
  const named = new Set([...engine.matchAll(/`([\w/-]+)\.ts`/g)].map(m => m[1]))
  const modules = fs.readdirSync('src/mcp', { recursive: true, encoding: 'utf8' }).filter(f => f.endsWith('.ts')).map(f => f.replace(/\.ts$/, ''))
  t.same([...named].filter(m => !modules.includes(m)), [], 'no module that is gone')
  t.same(modules.filter(m => !named.has(m)), [], 'none left out')
})
