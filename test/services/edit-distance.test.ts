import t from 'tap'
import { closestName } from '../../src/services/edit-distance.js'

// The one typo fixer behind tool names, --tools names, flags and commands.

t.test('the closest candidate within 3 edits, case ignored; none when all are further or the word is too long', async (t) => {
  t.equal(closestName('serv', ['serve', 'stdio', 'index']), 'serve')
  t.equal(closestName('READ_FILE', ['read_files', 'find_files']), 'read_files')
  t.equal(closestName('frobnicate', ['serve', 'stdio']), undefined)
  t.equal(closestName('x'.repeat(65), ['x'.repeat(65)]), undefined)
  t.equal(closestName('anything', []), undefined)
})

t.test('of two as close, the one that starts like the word: a swap of two letters is two edits to either', async (t) => {
  t.equal(closestName('prot', ['root', 'port']), 'port')
  t.equal(closestName('prot', ['port', 'root']), 'port')
  t.equal(closestName('modee', ['mode', 'node']), 'mode', 'fewer edits win first')
})
