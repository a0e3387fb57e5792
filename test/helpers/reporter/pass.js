import t from 'tap'

// A fixture for test/scripts/test-runner.test.ts, copied into a project of its own (test/helpers is not run).
t.test('passes', async (t) => { t.equal(1, 1) })
t.test('skipped', { skip: 'on purpose' }, async () => {})
