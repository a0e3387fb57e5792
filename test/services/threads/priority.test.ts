import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { lowerThisThread } from '../../../src/services/threads/priority.js'

// A thread lowers its own priority through its thread id; where that cannot be found it keeps the process's.

const niceOf = (stat: string): number => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])

t.test('lowers the calling thread, not its process; a thread id that cannot be read changes nothing', { skip: process.platform === 'linux' ? false : 'reads /proc' }, async (t) => {
  const before = niceOf(fs.readFileSync('/proc/thread-self/stat', 'utf8'))
  const target = Math.min(before + 1, 19)
  t.equal(lowerThisThread(target), true)
  t.equal(niceOf(fs.readFileSync('/proc/thread-self/stat', 'utf8')), target, 'this thread now runs at the niceness asked for')

  const dir = t.testdir({})
  fs.symlinkSync('task/not-a-number', path.join(dir, 'odd'))
  t.equal(lowerThisThread(target, path.join(dir, 'odd')), false, 'a link that names no thread id')
  t.equal(lowerThisThread(target, path.join(dir, 'missing')), false, 'no /proc')
})
