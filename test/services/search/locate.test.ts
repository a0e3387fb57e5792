// Finding ripgrep: the bundled @vscode/ripgrep first, then PATH where the workspace cannot have planted one,
// else a clear error; its version and PCRE2 support are read from `rg --version`, and a binary that cannot run
// reports unknown rather than failing.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { locateRg, probeRg } from '../../../src/services/search/locate.js'

function fakeRg (t: { teardown(fn: () => void): void }, output: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-rg-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'rg')
  fs.writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' "${output}"\n`, { mode: 0o755 })
  return dir
}

t.test('an explicit path wins when it can run; otherwise the bundled binary', async (t) => {
  const rg = path.join(fakeRg(t, 'ripgrep 14.1.0'), 'rg')
  t.strictSame(await locateRg(rg, []), { rgPath: rg, source: 'option' })
  await t.rejects(locateRg('/nonexistent/rg', []), { message: '--ripgrep-path /nonexistent/rg is not an executable file' }, 'a wrong setting is said at start, not at the first search')
  t.match(await locateRg(undefined, []), { source: '@vscode/ripgrep' })
})

t.test('without the bundled binary, rg on PATH; without either, an error that says what to install', async (t) => {
  const { locateRg: withoutBundle } = await t.mockImport<typeof import('../../../src/services/search/locate.js')>('../../../src/services/search/locate.js', {
    '@vscode/ripgrep': { rgPath: '/nonexistent/rg' }
  })
  const dir = fakeRg(t, 'ripgrep 14.1.0')
  const saved = process.env.PATH
  t.teardown(() => { process.env.PATH = saved })

  process.env.PATH = ['', '/nonexistent-dir', dir].join(path.delimiter)
  t.strictSame(await withoutBundle(undefined, []), { rgPath: path.join(dir, 'rg'), source: 'PATH' })
  process.env.PATH = '/nonexistent-dir'
  await t.rejects(withoutBundle(undefined, []), /ripgrep not found: install @vscode\/ripgrep or put rg on PATH/)
  const { locateRg: brokenBundle } = await t.mockImport<typeof import('../../../src/services/search/locate.js')>('../../../src/services/search/locate.js', {
    '@vscode/ripgrep': { get rgPath (): string { throw new Error('no binary for this platform') } }
  })
  delete process.env.PATH
  await t.rejects(brokenBundle(undefined, []), /ripgrep not found/, 'a package that fails to load counts as absent')
})

t.test('an rg planted in a served root is never run: not through a relative PATH entry, an absolute one, or a link', async (t) => {
  const { locateRg: withoutBundle } = await t.mockImport<typeof import('../../../src/services/search/locate.js')>('../../../src/services/search/locate.js', {
    '@vscode/ripgrep': { rgPath: '/nonexistent/rg' }
  })
  const { findExecutable } = await import('../../../src/services/executables.js')
  const root = fs.realpathSync(fakeRg(t, 'planted'))
  const system = fakeRg(t, 'ripgrep 14.1.0')
  const links = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-links-'))
  t.teardown(() => fs.rmSync(links, { recursive: true, force: true }))
  fs.symlinkSync(path.join(root, 'rg'), path.join(links, 'rg'))
  const saved = { path: process.env.PATH, cwd: process.cwd() }
  t.teardown(() => {
    process.env.PATH = saved.path
    process.chdir(saved.cwd)
  })
  // Started inside the served folder, with `.` first on PATH — the classic plant.
  process.chdir(root)

  process.env.PATH = ['.', root, links, system].join(path.delimiter)
  t.strictSame(await withoutBundle(undefined, [root]), { rgPath: path.join(system, 'rg'), source: 'PATH' }, 'the first rg outside the root')
  process.env.PATH = ['.', root, links].join(path.delimiter)
  await t.rejects(withoutBundle(undefined, [root]), /an absolute entry outside the served roots/, 'only planted ones: none is run')
  t.equal(await findExecutable('rg', [root], { PATH: `${path.join(root, 'sub', '..')}` }), undefined, 'a spelling of the root with dot segments is the root')
  t.equal(await findExecutable('git', [root], {}), undefined, 'no PATH at all')
})

t.test('probeRg reads the version and PCRE2 support, and reports unknown for a binary that will not run', async (t) => {
  const dir = fakeRg(t, 'ripgrep 13.0.0 (rev abc)\\n+pcre2')
  t.strictSame(await probeRg(path.join(dir, 'rg')), { version: '13.0.0', pcre2Available: true })
  const plain = fakeRg(t, 'something else')
  t.strictSame(await probeRg(path.join(plain, 'rg')), { version: 'unknown', pcre2Available: false })
  t.strictSame(await probeRg('/nonexistent/rg'), { version: 'unknown', pcre2Available: false })
})
