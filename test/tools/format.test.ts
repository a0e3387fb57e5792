// The small formatters every tool's text goes through: sizes, counts, languages, echoed inputs.
import t from 'tap'
import { counted, cutLine, languageOf, shownInput } from '../../src/tool-kit/format.js'
import { formatBytes } from '../../src/services/byte-size.js'
import { compareText } from '../../src/tool-kit/paging.js'
import { fitLadder } from '../../src/tool-kit/budget.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'

t.test('formatBytes: bytes below 1 KiB, one decimal below 100 of a unit, whole numbers above, ? for unknown', async (t) => {
  t.equal(formatBytes(-1), '? B', 'a failed lstat')
  t.equal(formatBytes(0), '0 B')
  t.equal(formatBytes(1023), '1023 B')
  t.equal(formatBytes(1024), '1.0 KB')
  t.equal(formatBytes(150 * 1024), '150 KB')
  t.equal(formatBytes(1.5 * 1024 ** 2), '1.5 MB')
  t.equal(formatBytes(3 * 1024 ** 5), '3072 TB', 'past the last unit the number grows')
})

t.test('counted: singular for one (number or text), plural otherwise, -y nouns and given plurals', async (t) => {
  t.equal(counted(1, 'file'), '1 file')
  t.equal(counted('1', 'file'), '1 file')
  t.equal(counted('1+', 'file'), '1+ files', 'a lower bound is not one')
  t.equal(counted(0, 'file'), '0 files')
  t.equal(counted(2, 'entry'), '2 entries')
  t.equal(counted(3, 'match', 'matches'), '3 matches')
})

t.test('languageOf: by extension, whole-name files, dot-files and unknown names', async (t) => {
  t.equal(languageOf('src/app.ts'), 'TypeScript')
  t.equal(languageOf('deploy/Dockerfile'), 'Dockerfile')
  t.equal(languageOf('Makefile'), 'Makefile')
  t.equal(languageOf('.env'), '', 'a leading dot is not an extension')
  t.equal(languageOf('notes'), '')
  t.equal(languageOf('data.unknownext'), '')
})

t.test('shownInput: relative inputs echoed (control characters escaped, long ones cut), absolute ones never', async (t) => {
  t.equal(shownInput('src/a.ts', 'path'), 'src/a.ts')
  t.equal(shownInput('/etc/passwd', 'path'), 'path (absolute path)')
  t.equal(shownInput('file:///etc/passwd', 'path'), 'path (absolute path)')
  t.equal(shownInput('C:\\Windows', 'path'), 'path (absolute path)')
  t.equal(shownInput('a\nb', 'path'), 'a\\x0ab')
  t.equal(shownInput('x'.repeat(400), 'path').length, 300)
  t.equal(shownInput(42 as unknown as string, 'files[0].path'), 'files[0].path (not a string)')
})

t.test('cutLine keeps short lines and says how much of a long one was cut', async (t) => {
  t.equal(cutLine('short'), 'short')
  t.equal(cutLine('abcdef', 4), 'abcd… [line cut: +2 chars]')
})

t.test('compareText orders by code unit, equal strings compare 0', async (t) => {
  t.equal(compareText('a', 'a'), 0)
  t.equal(compareText('B', 'a'), -1)
  t.equal(compareText('b', 'a'), 1)
})

t.test('fitLadder: equal renderings are measured once, the last rung comes back even over budget, and no rungs is a bug', async (t) => {
  const tokenizer = createTokenizer()
  t.teardown(() => { tokenizer.close().catch(() => {}) })
  const big = 'word '.repeat(3000)
  let made = 0
  const rung = (text: string, info: number) => () => { made++; return { text, info } }

  const fitted = await fitLadder([rung(big, 0), rung(big, 1), rung(big + '!', 2)], 1000, tokenizer)
  t.equal(made, 3)
  t.strictSame([fitted.info, fitted.rung, fitted.measured.fits], [2, 2, false], 'nothing fits: the last rung, marked as not fitting')
  await t.rejects(fitLadder([], 1000, tokenizer), /needs at least one rung/)
})
