import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

function sources (dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : []
  })
}

const files = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'plugins'))]

t.test('source files stay under the 500-line hard cap', async (t) => {
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n').length
    t.ok(lines <= 500, `${relative(ROOT, file)} has ${lines} lines`)
  }
})

t.test('source file names are kebab-case', async (t) => {
  for (const file of files) t.match(relative(ROOT, file), /^[a-z0-9/-]+(\.[a-z]+)?\.ts$/)
})

t.test('no source outside the transports writes to stdout', async (t) => {
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const rel = relative(ROOT, file)
    if (rel.startsWith('src/bin/') || rel === 'src/cli.ts' || rel === 'src/mcp/stdio.ts') continue
    t.notMatch(text, /process\.stdout\.write|console\.log\(/, `${rel} does not write to stdout`)
  }
})
