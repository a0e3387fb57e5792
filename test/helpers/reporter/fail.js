import t from 'tap'

// A fixture for test/scripts/test-runner.test.ts, copied into a project of its own (test/helpers is not run).
t.test('a failing behaviour', async (t) => {
  t.equal(1, 1, 'this one holds')
  t.equal('actual', 'expected', 'this one does not')
})
