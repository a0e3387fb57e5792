import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import fc from 'fast-check'
import pino from 'pino'
import { createSearch, type SearchPage } from '../../../src/services/search/search.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { runs } from '../../helpers/property.js'

// The paging class: any page (page_size, offset, context_lines) of any small file or folder equals what reading the
// files gives (the first pass counts, each page reads its window, from the files' start or, far into a named file,
// from where a plain run found it starts), and whatever a page may hold (a cut page is a prefix of the right one, and
// says so).

const log = pino({ level: 'silent' })

/** The lines of a file as ripgrep numbers them (a last line without its newline is a line too), as shown (no CR before a newline). */
const linesOf = (content: string): string[] => {
  const lines = content.split('\n')
  if (content.endsWith('\n')) lines.pop()
  return lines.map((line, i) => i < lines.length - 1 || content.endsWith('\n') ? line.replace(/\r$/, '') : line)
}

/** Every matching line of `files` (sorted by name) with its context, computed from the text. */
function reference (files: Array<[string, string]>, contextLines: number) {
  const hits: Array<{ path: string, line: number, context: Array<[number, string, boolean]> }> = []
  for (const [name, content] of [...files].sort(([a], [b]) => a < b ? -1 : 1)) {
    const lines = linesOf(content)
    lines.forEach((text, i) => {
      if (!text.includes('x')) return
      const context: Array<[number, string, boolean]> = []
      for (let j = Math.max(0, i - contextLines); j <= Math.min(lines.length - 1, i + contextLines); j++) {
        if (j !== i) context.push([j + 1, lines[j], lines[j].includes('x')])
      }
      hits.push({ path: name, line: i + 1, context })
    })
  }
  return hits
}

const shown = (page: SearchPage) => page.content.map(item => ({ path: item.path, line: item.hit.line, context: item.context.map(c => [c.line, c.text, c.match]) }))

const line = fc.array(fc.constantFrom('x', 'y', ' ', 'é', '\r'), { maxLength: 5 }).map(cs => cs.join(''))
const file = fc.tuple(fc.array(line, { minLength: 1, maxLength: 30 }), fc.boolean()).map(([lines, newline]) => lines.join('\n') + (newline ? '\n' : ''))

t.test('any page of any small file or folder equals the reference read from the files', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wsmcp-paging-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  const workspace = await createWorkspace({ root, log })
  let run = 0

  await fc.assert(fc.asyncProperty(
    fc.array(file, { minLength: 1, maxLength: 3 }),
    fc.boolean(),
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 1, max: 12 }),
    fc.array(fc.nat({ max: 40 }), { minLength: 1, maxLength: 3 }),
    fc.option(fc.integer({ min: 200, max: 1500 })),
    // A named file's window from this many matches in is sought (a plain run, then stdin), not read from the start.
    fc.option(fc.integer({ min: 0, max: 4 })),
    async (contents, named, contextLines, pageSize, offsets, maxPageBytes, seekFrom) => {
      const dir = `run-${run++}`
      const files: Array<[string, string]> = (named ? contents.slice(0, 1) : contents).map((content, i) => [`${dir}/${'abc'[i]}.txt`, content])
      fs.mkdirSync(path.join(root, dir))
      for (const [name, content] of files) fs.writeFileSync(path.join(root, name), content)
      const expected = reference(files, contextLines)
      const search = await createSearch({
        workspace,
        log,
        // The pages are the point: a loaded machine must not cut a scan short (a partial set is another class).
        timeoutMs: 100_000,
        ...(maxPageBytes === null ? {} : { maxPageBytes }),
        ...(seekFrom === null ? {} : { seekFrom })
      })
      try {
        // Several pages of one search: the first runs it, the others page the cached set.
        for (const offset of offsets) {
          const page = await search.search({ pattern: 'x', path: named ? files[0][0] : dir, contextLines }, { offset, pageSize })
          const want = expected.slice(offset, offset + pageSize)
          const got = shown(page)
          const cut = page.notices.some(n => n.startsWith('this page was cut'))
          if (page.total !== expected.length || page.totalIsLowerBound) return false
          if (JSON.stringify(got) !== JSON.stringify(want.slice(0, got.length))) return false
          // A page is whole, or cut after at least one result and saying so.
          if (got.length !== want.length && !(cut && got.length > 0)) return false
        }
        return true
      } finally {
        search.close()
      }
    }
  ), runs(60))
})
