import { spawn } from 'node:child_process'
import fs from 'node:fs'
import t from 'tap'
import { renice } from '../../../src/services/search/priority.js'

// renice sets the niceness of every thread of a process; a process that is gone is not an error.

const niceOf = (stat: string): number => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])

t.test('every thread of a running process gets the niceness asked for', { skip: process.platform === 'linux' ? false : 'reads /proc' }, async (t) => {
  // A process is the point: its threads' niceness is read back from /proc.
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  t.teardown(() => child.kill('SIGKILL'))
  const pid = child.pid as number
  // Node starts its threads before running the script; wait until there are several.
  while (fs.readdirSync(`/proc/${pid}/task`).length < 2) await new Promise(resolve => setTimeout(resolve, 5))

  renice(pid, 12)

  const threads = fs.readdirSync(`/proc/${pid}/task`)
  t.ok(threads.length > 1, `${threads.length} threads`)
  t.same(threads.map(tid => niceOf(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))), threads.map(() => 12))
})

t.test('a process that has exited keeps nothing to set: no error', async (t) => {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  const pid = child.pid as number
  await new Promise(resolve => child.once('close', resolve))

  t.doesNotThrow(() => renice(pid, 12))
})
