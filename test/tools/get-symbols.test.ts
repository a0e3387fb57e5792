import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import pino from 'pino'
import t, { type Test } from 'tap'
import { Value } from '@sinclair/typebox/value'
import { createSymbolParser, locateTreeSitter, type SymbolParser, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import { createWorkspaceSet } from '../../src/services/workspace/set.js'
import type { ToolResult } from '../../src/tool-api/define-tool.js'
import { getSymbols, GetSymbolsOutput, MAX_OUTLINE_BYTES } from '../../src/tools/get-symbols.js'
import { runs } from '../helpers/property.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

const tokenizer = createTokenizer({ workers: 0 })
const log = pino({ level: 'silent' })
const parser = createSymbolParser(locateTreeSitter() as TreeSitterLocation)
const CANARY = 'CANARY-symbols-outside'

interface Fixture { root: string, base: string, workspace: WorkspaceService }

/** A root with sources in several languages, and a secret C file beside it that links point at. */
async function fixture (t: Test): Promise<Fixture> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-symbols-')))
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'root')
  const write = (name: string, text: string | Buffer): void => {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  fs.mkdirSync(path.join(base, 'outside'))
  fs.writeFileSync(path.join(base, 'outside', 'secret.c'), `int ${CANARY.replace(/-/g, '_')}(void) { return 1; }\n`)
  write('src/upload.ts', 'export class Uploader {\n  retryFailedUpload (path: string): number {\n    const backoff = () => 2\n    return backoff()\n  }\n}\n\nexport function createUploader (): Uploader {\n  return new Uploader()\n}\n')
  write('src/server.py', 'class Server:\n    def serve(self):\n        pass\n\ndef main():\n    Server().serve()\n')
  write('src/many.js', Array.from({ length: 120 }, (_, i) => `function handler${i} (request) {\n  return ${i}\n}\n`).join(''))
  write('src/crlf.go', 'package main\r\n\r\nfunc First() {\r\n}\r\n\r\nfunc Second() {\r\n}\r\n')
  write('src/utf16.ts', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('export function wide (): void {}\n', 'utf16le')]))
  write('src/empty.rs', '// nothing defined here\n')
  write('src/minified.js', `function tiny () {}\nvar x = "${'a'.repeat(9000)}"\n`)
  write('src/blob.c', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2]))
  write('README.md', '# Readme\n')
  fs.symlinkSync('../outside/secret.c', path.join(root, 'link-out.c'))
  fs.symlinkSync('src/upload.ts', path.join(root, 'link-in.ts'))
  const workspace = await createWorkspace({ root, log })
  return { root, base, workspace }
}

const call = async (workspace: WorkspaceService, args: Record<string, unknown>, symbols: SymbolParser = parser): Promise<ToolResult> =>
  await getSymbols.run({ workspace, tokenizer, symbols, ...args } as never, toolContext())
const structured = (r: ToolResult): Record<string, any> => r.structuredContent as Record<string, any>

t.test('outlines a batch: nesting, per-file errors, the structured copy', async (t) => {
  const { workspace } = await fixture(t)
  const result = await call(workspace, { paths: ['src/upload.ts', 'README.md', 'src', 'missing.ts', 'src/server.py', 'src/empty.rs'] })
  const text = textOf(result)
  t.match(text, /^# Outline of 6 files — 6 symbols \(lines first-last; read_files files=\[\{"path":…,"start_line":first,"end_line":last\}\] reads one\)\n/)
  t.match(text, /\n## src\/upload\.ts — TypeScript, 3 symbols\nNote: 1 nested symbol below depth 2 not shown \(depth=3 or more shows them\)\n1-6 class Uploader: export class Uploader\n {2}2-5 method retryFailedUpload: retryFailedUpload \(path: string\): number\n8-10 function createUploader: export function createUploader \(\): Uploader\n/)
  t.match(text, /\n## README\.md — ERROR UNSUPPORTED_LANGUAGE: paths\[1\]: "README\.md" is not in a language the outline reads; it reads TypeScript \(\.ts \.mts \.cts\), .*C\+\+ \(\.cc .*\)\. Hint: read_files reads it; search_regex finds definitions by pattern/)
  t.match(text, /\n## src — ERROR IS_A_DIRECTORY: paths\[2\]: "src" is a directory\. Hint: list_directory path="src" lists it\.\n/)
  t.match(text, /\n## missing\.ts — ERROR PATH_NOT_FOUND: paths\[3\]/)
  t.match(text, /\n## src\/server\.py — Python, 3 symbols\n1-3 class Server: class Server:\n {2}2-3 method serve: def serve\(self\):\n5-6 function main: def main\(\):\n/)
  t.match(text, /\n## src\/empty\.rs — Rust, 0 symbols\n\(no symbols\)\nSymbols 1–6 of 6 \| next: none$/)
  t.notOk(result.isError, 'some files were outlined')
  const data = structured(result)
  t.ok(Value.Check(GetSymbolsOutput, data), 'structuredContent matches the output schema')
  t.same(data.files, [
    { path: 'src/upload.ts', language: 'TypeScript', symbols: 3 },
    { path: 'README.md', error: 'UNSUPPORTED_LANGUAGE' },
    { path: 'src', error: 'IS_A_DIRECTORY' },
    { path: 'missing.ts', error: 'PATH_NOT_FOUND' },
    { path: 'src/server.py', language: 'Python', symbols: 3 },
    { path: 'src/empty.rs', language: 'Rust', symbols: 0 }
  ])
  t.same(data.symbols[1], { path: 'src/upload.ts', kind: 'method', name: 'retryFailedUpload', container: 'Uploader', line: 2, end_line: 5, signature: 'retryFailedUpload (path: string): number' })
  t.notOk('container' in data.symbols[0], 'no empty container')

  const failed = await call(workspace, { paths: ['README.md', 'nope.py'] })
  t.equal(failed.isError, true, 'every file failed')
  t.match(textOf(failed), /\n## README\.md — ERROR UNSUPPORTED_LANGUAGE.*\n## nope\.py — ERROR PATH_NOT_FOUND.*\nSymbols 0 of 0 \| next: none$/)
})

t.test('depth and kinds filter; a flat listing names each symbol\'s container', async (t) => {
  const { workspace } = await fixture(t)
  const deep = textOf(await call(workspace, { paths: ['src/upload.ts'], depth: 3 }))
  t.match(deep, /\n {4}3 function backoff: const backoff = \(\) => 2\n/)
  const top = await call(workspace, { paths: ['src/upload.ts', 'src/server.py'], depth: 1 })
  t.same(structured(top).symbols.map((s: { name: string }) => s.name), ['Uploader', 'createUploader', 'Server', 'main'])
  const methods = textOf(await call(workspace, { paths: ['src/upload.ts', 'src/server.py'], kinds: ['method'] }))
  t.match(methods, /\n2-5 method retryFailedUpload \(in Uploader\): retryFailedUpload/)
  t.match(methods, /\n2-3 method serve \(in Server\): def serve/)
  t.match(methods, /— 2 symbols/)
})

t.test('pages are deterministic and the budget cuts a page, never a symbol, with the exact next call', async (t) => {
  const { workspace } = await fixture(t)
  const whole = structured(await call(workspace, { paths: ['src/many.js'] })).symbols
  t.equal(whole.length, 120)
  const collected: unknown[] = []
  let offset = 0
  for (let pages = 0; offset !== -1 && pages < 10; pages++) {
    const page = await call(workspace, { paths: ['src/many.js'], page_size: 50, offset })
    collected.push(...structured(page).symbols)
    offset = structured(page).pagination.next_offset
    if (offset !== -1) t.match(textOf(page), new RegExp(`next: get_symbols paths=\\["src/many\\.js"\\] page_size=50 offset=${offset}$`))
  }
  t.same(collected, whole, 'the pages add up to the whole outline, in order')

  const cut = await call(workspace, { paths: ['src/many.js'], max_response_tokens: 1000 })
  const p = structured(cut).pagination
  t.ok(p.returned > 5 && p.returned < 120, `a page of ${p.returned} symbols fits 1000 tokens`)
  t.equal(p.next_offset, p.returned)
  t.ok(await tokenizer.countExact(textOf(cut)) <= 1000, 'the answer fits its budget')
  t.match(textOf(cut), new RegExp(`\\nNote: page cut to ${p.returned} symbols to fit max_response_tokens=1000; the next call continues\\nSymbols 1–${p.returned} of 120 \\| next: get_symbols paths=\\["src/many\\.js"\\] max_response_tokens=1000 offset=${p.returned}$`))
  const rest = await call(workspace, { paths: ['src/many.js'], max_response_tokens: 1000, offset: p.returned })
  t.same(structured(rest).symbols[0], whole[p.returned], 'the next call starts where the cut page stopped')
  // A later page repeats a file's header, and a member starting a page names its owner.
  const later = textOf(await call(workspace, { paths: ['src/upload.ts'], offset: 1 }))
  t.match(later, /\n## src\/upload\.ts — TypeScript, 3 symbols\n.*\n {2}2-5 method retryFailedUpload \(in Uploader\): /)
  // Errors too long for the budget still leave room for one symbol: every call moves forward.
  const crowded = await call(workspace, { paths: [...Array.from({ length: 15 }, () => 'README.md'), 'src/many.js'], max_response_tokens: 1000 })
  t.equal(structured(crowded).pagination.returned, 1)
  t.equal(structured(crowded).pagination.next_offset, 1)
  t.match(textOf(await call(workspace, { paths: ['src/many.js'], offset: 500 })), /\nNote: offset 500 is past the end \(120 symbols\); use offset=0\nSymbols 0 of 120/)
  t.match(textOf(await call(workspace, { paths: ['README.md', 'src/upload.ts'], offset: 1 })), /^# [^\n]*\n## src\/upload\.ts/, 'an error is shown on the first page only')
})

t.test('text that is not plain UTF-8, CRLF lines, long lines, size and binary limits', async (t) => {
  const { workspace, root } = await fixture(t)
  t.match(textOf(await call(workspace, { paths: ['src/crlf.go'] })), /\n3-4 function First: func First\(\)\n6-7 function Second: func Second\(\)\n/, 'CRLF lines count as lines')
  t.match(textOf(await call(workspace, { paths: ['src/utf16.ts'] })), /\n1 function wide: export function wide \(\): void \{\}\n/, 'UTF-16 is decoded before parsing')
  t.match(textOf(await call(workspace, { paths: ['src/minified.js'] })), /Note: lines over 8 KB were cut before parsing \(minified code\?\): symbols on them may be missing\n1 function tiny/)
  t.match(textOf(await call(workspace, { paths: ['src/blob.c'] })), /ERROR BINARY_FILE: "src\/blob\.c" is binary/)
  fs.writeFileSync(path.join(root, 'huge.c'), '')
  fs.truncateSync(path.join(root, 'huge.c'), MAX_OUTLINE_BYTES + 1)
  t.match(textOf(await call(workspace, { paths: ['huge.c'] })), /ERROR FILE_TOO_LARGE: paths\[0\]: "huge\.c" is 2\.0 MB \(outlines are made of files up to 2\.0 MB\)\. Hint: search_regex path="huge\.c"/)
  const broken = textOf(await call(workspace, { paths: ['src/upload.ts'] }, { definitions: async () => await Promise.reject(Object.assign(new Error('ERROR PARSE_FAILED: the parser stopped: x'), { code: 'APP_ERR_TOOL', toolCode: 'PARSE_FAILED' })), warm: async () => {}, close: async () => {} }))
  t.match(broken, /## src\/upload\.ts — ERROR PARSE_FAILED: the parser stopped: x/)
  fs.writeFileSync(path.join(root, 'half.c'), 'int ok(void) { return 0; }\nint broken( { ]]]\n')
  t.match(textOf(await call(workspace, { paths: ['half.c'] })), /Note: parts of the file did not parse \(macros or syntax the grammar does not know\): symbols there may be missing\n1 function ok/)
})

t.test('too many files, cancellation, and the tool never reads outside its root (property)', async (t) => {
  const { workspace, base, root } = await fixture(t)
  await t.rejects(call(workspace, { paths: Array.from({ length: 21 }, (_, i) => `f${i}.ts`) }), { message: /^ERROR TOO_MANY_ITEMS: paths: 21 files given, at most 20 per call\. Hint: split them into 2 calls\./ })
  const controller = new AbortController()
  controller.abort()
  await t.rejects(async () => await getSymbols.run({ workspace, tokenizer, symbols: parser, paths: ['src/upload.ts'] } as never, toolContext(controller.signal)), { name: 'AbortError' })

  t.match(textOf(await call(workspace, { paths: ['link-in.ts'] })), /## link-in\.ts — TypeScript, 3 symbols/, 'a link inside the root is outlined')
  const pieces = ['..', '.', 'link-out.c', 'outside', 'secret.c', 'src', 'upload.ts', '\\x2e\\x2e', '%2e%2e', base, root, `${base}/outside/secret.c`, 'file://', '\u0000']
  await fc.assert(fc.asyncProperty(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 5 }).map(parts => parts.join('/')), async (hostile) => {
    const result = await call(workspace, { paths: [hostile] })
    // Nothing of the file beside the root: a path outside is refused before the disk, a link out is not followed.
    const file = structured(result).files[0]
    return !JSON.stringify(result).includes('CANARY') && (file.error !== undefined || file.path.startsWith('src/') || file.path === 'link-in.ts')
  }), runs(150))
  t.match(textOf(await call(workspace, { paths: ['link-out.c', '../outside/secret.c'] })), /ERROR SYMLINK_ESCAPES_ROOT.*\n## \.\.\/outside\/secret\.c — ERROR PATH_OUTSIDE_ROOT/)
})

t.test('several roots: paths carry their root', async (t) => {
  const one = await fixture(t)
  const two = await fixture(t)
  const [a, b] = await Promise.all([
    createWorkspace({ root: one.root, name: 'app', prefixed: true, log }),
    createWorkspace({ root: two.root, name: 'lib', prefixed: true, log })
  ])
  const set = createWorkspaceSet([a, b], undefined as never)
  const result = await call(set, { paths: ['src/server.py', 'lib:src/upload.ts'], depth: 1 })
  t.match(textOf(result), /\n## app:src\/server\.py — Python, 2 symbols\n.*\n1-3 class Server: class Server:\n5-6 function main: def main\(\):\n## lib:src\/upload\.ts — TypeScript, 2 symbols\n/)
  t.same(structured(result).symbols.map((s: { path: string }) => s.path), ['app:src/server.py', 'app:src/server.py', 'lib:src/upload.ts', 'lib:src/upload.ts'])
})
