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

const files = sources(join(ROOT, 'src'))

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

t.test('no sentence the server writes names a setting by its config key: users know the flag (--embeddings-url, not embeddingsUrl)', async (t) => {
  const { ConfigSchema } = await import('../src/base/config.js')
  const keys = Object.keys(ConfigSchema.properties).filter(key => /[A-Z]/.test(key))
  const key = new RegExp(`(?<![\\w.-])(${keys.join('|')})(?![\\w-])`)
  for (const file of files) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return
      // The text of each string on the line (a template's ${…} left out); prose has a space, a key name alone is code.
      const texts = [...line.matchAll(/'((?:[^'\\]|\\.)*)'|`((?:[^`\\]|\\.)*)`/g)].map(m => (m[1] ?? m[2]).replace(/\$\{[^}]*\}/g, ''))
      for (const text of texts.filter(s => s.includes(' '))) t.notMatch(text, key, `${relative(ROOT, file)}:${i + 1}`)
    })
  }
})
