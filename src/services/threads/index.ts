// The threads' front door: the one way this server runs work on a worker thread.
// Everything else in this folder is private to it (eslint.config.js and test/layers.test.ts hold that).
export { createJobThread } from './job-thread.js'
export type { JobThread } from './job-thread.js'
export { INDEX_NICENESS } from './priority.js'
export { DetailedError, serveAs } from './serve.js'
export type { Notify } from './serve.js'
export { ThreadError, startThread, threadModule } from './thread.js'
export type { Thread } from './thread.js'
