import t from 'tap'
import fc from 'fast-check'
import { mentionsAny, pruneLines, pruneMentions } from '../../src/services/prune-mentions.js'
import { runs } from '../helpers/property.js'

// Prose loses what it says of tools a server does not serve, at the smallest unit that names one.

const names = (...list: string[]): Set<string> => new Set(list)

t.test('a clause, a parenthesis or an e.g. tail naming a left-out tool goes; the rest of the sentence stays', async (t) => {
  t.equal(pruneMentions('git_log finds commits to compare; git_show shows one commit whole. Untracked files are not part of a diff.', names('git_show')),
    'git_log finds commits to compare. Untracked files are not part of a diff.')
  t.equal(pruneMentions('git_log finds commits; git_show shows one. Untracked files are left out.', names('git_log')), 'git_show shows one. Untracked files are left out.')
  t.equal(pruneMentions('use a path relative to the root, e.g. path="src" (list_directory path="." shows the top level)', names('list_directory')), 'use a path relative to the root, e.g. path="src"')
  t.equal(pruneMentions('Only document these tools, e.g. ["read_files", "search_regex"]; omit for every tool', names('read_files')), 'Only document these tools; omit for every tool')
  t.equal(pruneMentions('read it with read_files files=[{"path":"a. b; c"}], or get_file_info paths=["a. b"]', names('read_files')), 'get_file_info paths=["a. b"]', 'quotes and brackets are never cut inside')
  t.equal(pruneMentions('read it with read_files files=[{"path":"a. b"}], or get_file_info paths=["a. b"]', names('get_file_info')), 'read it with read_files files=[{"path":"a. b"}]')
  t.equal(pruneMentions('Note: ranked by words (as search_code ranks) — retried at 10:00!', names('search_code')), 'Note: ranked by words — retried at 10:00!')
})

t.test('a sentence, a line or a paragraph that is only about left-out tools goes, and no blank line doubles', async (t) => {
  t.equal(pruneMentions('List things.\n\nfind_files finds files by name anywhere.', names('find_files')), 'List things.')
  t.equal(pruneMentions('find_files finds by name.\n\nList things.\n\n\nMore.', names('find_files')), 'List things.\n\nMore.')
  t.equal(pruneMentions('Use find_files to match names. .gitignore rules apply.', names('find_files')), '.gitignore rules apply.')
  t.equal(pruneMentions('- `git_log` lists commits\n- `read_files` reads', names('git_log')), '- `read_files` reads')
  t.same(pruneLines(['a', 'git_log lists them.', 'b'], names('git_log')), ['a', 'b'])
})

t.test('paths and file names are not tool names; text naming no left-out tool is the same string', async (t) => {
  const text = 'see src/git_log.ts, "git_log.txt" and docs/read_files; get_file_info.'
  t.equal(pruneMentions(text, names('git_log', 'read_files')), text)
  t.equal(pruneMentions('git_log lists them', names()), 'git_log lists them')
  t.notOk(mentionsAny('git_logs and my_git_log', names('git_log')))
  t.ok(mentionsAny('call `git_log`.', names('git_log')))
  t.equal(pruneMentions('e.g. "x" names read_files i.e. the reader. Next.', names('read_files')), 'Next.', 'e.g. and i.e. do not end a sentence')
})

const TOOLS = ['list_directory', 'find_files', 'read_files', 'git_log', 'search_regex']
const word = fc.oneof(fc.constantFrom(...TOOLS), fc.stringMatching(/^[a-z]{1,8}$/), fc.constantFrom('e.g.', '(x', 'y)', '"a. b"', '`c`', '[d;', 'e]', 'src/read_files.ts'))
const sep = fc.constantFrom(' ', ' ', ' ', '; ', ', or ', '. ', '? ', '\n', '\n\n', ', ')
const prose = fc.array(fc.tuple(word, sep), { maxLength: 40 }).map(parts => parts.map(([w, s]) => w + s).join('').trim())

t.test('property: the pruned text names no left-out tool, keeps only what was there, and pruning again changes nothing', async (t) => {
  fc.assert(fc.property(prose, fc.subarray(TOOLS), (text, left) => {
    const out = pruneMentions(text, new Set(left))
    if (mentionsAny(out, new Set(left))) return false
    if (out.length > text.length) return false
    if (pruneMentions(out, new Set(left)) !== out) return false
    return left.some(name => text.includes(name)) || out === text
  }), runs(500))
  t.pass('held')
})
