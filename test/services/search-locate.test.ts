// Finding ripgrep: the bundled @vscode/ripgrep first, then PATH, else a clear error; its version and PCRE2
// support are read from `rg --version`, and a binary that cannot run reports unknown rather than failing.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { locateRg, probeRg } from '../../src/services/search-locate.js'

function fakeRg (t: { teardown(fn: () => void): void }, output: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-rg-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'rg')
  fs.writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' "${output}"\n`, { mode: 0o755 })
  return dir
}

t.test('an explicit path wins; otherwise the bundled binary', async (t) => {
  t.strictSame(await locateRg('/opt/rg'), { rgPath: '/opt/rg', source: 'option' })
  t.match(await locateRg(), { source: '@vscode/ripgrep' })
})

t.test('without the bundled binary, rg on PATH; without either, an error that says what to install', async (t) => {
  const { locateRg: withoutBundle } = await t.mockImport<typeof import('../../src/services/search-locate.js')>('../../src/services/search-locate.js', {
    '@vscode/ripgrep': { rgPath: '/nonexistent/rg' }
  })
  const dir = fakeRg(t, 'ripgrep 14.1.0')
  const saved = process.env.PATH
  t.teardown(() => { process.env.PATH = saved })

  process.env.PATH = ['', '/nonexistent-dir', dir].join(path.delimiter)
  t.strictSame(await withoutBundle(), { rgPath: path.join(dir, 'rg'), source: 'PATH' })
  process.env.PATH = '/nonexistent-dir'
  await t.rejects(withoutBundle(), /ripgrep not found: install @vscode\/ripgrep or put rg on PATH/)
  const { locateRg: brokenBundle } = await t.mockImport<typeof import('../../src/services/search-locate.js')>('../../src/services/search-locate.js', {
    '@vscode/ripgrep': { get rgPath (): string { throw new Error('no binary for this platform') } }
  })
  delete process.env.PATH
  await t.rejects(brokenBundle(), /ripgrep not found/, 'a package that fails to load counts as absent')
})

t.test('probeRg reads the version and PCRE2 support, and reports unknown for a binary that will not run', async (t) => {
  const dir = fakeRg(t, 'ripgrep 13.0.0 (rev abc)\\n+pcre2')
  t.strictSame(await probeRg(path.join(dir, 'rg')), { version: '13.0.0', pcre2Available: true })
  const plain = fakeRg(t, 'something else')
  t.strictSame(await probeRg(path.join(plain, 'rg')), { version: 'unknown', pcre2Available: false })
  t.strictSame(await probeRg('/nonexistent/rg'), { version: 'unknown', pcre2Available: false })
})
