import t from 'tap'
import { compareText } from '../../src/services/compare-text.js'

t.test('compareText orders by UTF-16 code units, the same in every locale', async (t) => {
  t.equal(compareText('a', 'b'), -1)
  t.equal(compareText('b', 'a'), 1)
  t.equal(compareText('same', 'same'), 0)
  t.equal(compareText('Z', 'a'), -1, 'upper case first, as code units say')
  t.strictSame(['é', 'e', 'z'].sort(compareText), ['e', 'z', 'é'])
})
