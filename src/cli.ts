#!/usr/bin/env node
// Only node:* imports here and in bin/run.ts: `stdio` must point console at stderr before any dependency loads.
import process from 'node:process'
import { reportFailure, run } from './bin/run.js'

const argv = process.argv.slice(2)
if (argv[0] === 'stdio') {
  // stdout belongs to JSON-RPC: anything a dependency prints goes to stderr.
  /* eslint-disable no-console -- the one place console is touched: pointing it at stderr */
  const toStderr = (...args: unknown[]): void => { process.stderr.write(args.map(String).join(' ') + '\n') }
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
  console.warn = toStderr
  /* eslint-enable no-console */
}
// A failed command may have started threads or a listener: exit now rather than wait for them.
run(argv, process).catch((err: Error) => process.exit(reportFailure(err, process)))
