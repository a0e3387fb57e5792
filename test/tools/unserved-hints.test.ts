import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stdioInProcess } from '../helpers/in-process.js'
import { commitAll } from '../helpers/git-repo.js'

// The prose of answers and errors names only served tools: each tool's own suggestions, over a real server started
// with --exclude-tools, in this process.

const root = mkdtempSync(join(tmpdir(), 'wmcp-unserved-'))
mkdirSync(join(root, 'src'))
const long = ['def big():', ...Array.from({ length: 260 }, (_, i) => `    x${i} = ${i}`), '    return x0', '']
writeFileSync(join(root, 'src', 'big.py'), long.join('\n'))
writeFileSync(join(root, 'README.md'), '# Unserved\n')
commitAll(root, 'init')

async function server (t: Test, exclude: string) {
  const proc = await stdioInProcess(t, ['--root', root, '--state-dir', mkdtempSync(join(tmpdir(), 'wmcp-unserved-state-')), '--exclude-tools', exclude])
  proc.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  await proc.response(0)
  // The first answer starts the index's first scan: wait for it, so the index tools answer from a whole index.
  t.ok(await proc.runtime.services.codeIndex?.ready(100_000, new AbortController().signal, () => {}), 'the code index is built')
  let id = 1
  return async (name: string, args: Record<string, unknown>): Promise<string> => {
    const n = id++
    proc.send({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name, arguments: args } })
    const answer = await proc.response(n) as { result: { content: Array<{ text: string }> } }
    return answer.result.content.map(c => c.text).join('\n')
  }
}

t.test('without search_regex and read_files: the index tools, the outline and the workspace facts name neither', async (t) => {
  const call = await server(t, 'search_regex,read_files')
  const gone = /\b(search_regex|read_files)\b/

  const texts = {
    'search_code without a hit': await call('search_code', { query: 'zebra quokka' }),
    'search_code with a hit': await call('search_code', { query: 'x1 x2 return' }),
    'find_symbol without a hit': await call('find_symbol', { name: 'nothing_here' }),
    'find_symbol with a long body': await call('find_symbol', { name: 'big', include_body: true, max_response_tokens: 20000 }),
    get_symbols: await call('get_symbols', { paths: ['src/big.py'] }),
    get_workspace_info: await call('get_workspace_info', {}),
    'list_directory on a file': await call('list_directory', { path: 'README.md' })
  }

  for (const [what, text] of Object.entries(texts)) t.notMatch(text, gone, what)
  t.match(texts['search_code without a hit'], /^No indexed code has these words\.$/m, 'the finding stays, the suggestion goes')
  t.match(texts['find_symbol with a long body'], /\n… \d+ more lines\n/, 'the count stays, the call goes')
  t.match(texts['list_directory on a file'], /Hint: get_file_info paths=\["README\.md"\]\.$/, 'the served alternative stays')
  t.match(texts.get_symbols, /^# Outline of 1 file — \d+ symbols?\n/)
})

t.test('without git_log and find_files: a history answer and a path hint keep only what is served', async (t) => {
  const call = await server(t, 'git_log,find_files')

  const diff = await call('git_diff', {})
  const missing = await call('get_file_info', { paths: ['nope/missing.txt'] })

  t.match(diff, /^No uncommitted changes\.$/m)
  t.notMatch(diff, /git_log/)
  t.notMatch(missing, /find_files/)
})
