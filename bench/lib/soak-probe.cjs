// Preloaded into the soak's server process (`node --expose-gc --require …`), never shipped: answers the
// soak over the IPC channel with this process's memory (after a full GC when asked) and its
// event-loop delay since the last sample, so the figures come from inside without an endpoint.
'use strict'
const { monitorEventLoopDelay } = require('node:perf_hooks')
const v8 = require('node:v8')

const delay = monitorEventLoopDelay({ resolution: 10 })
delay.enable()

process.on('message', (message) => {
  if (message === null || typeof message !== 'object' || message.type !== 'sample') return
  if (message.gc === true && typeof globalThis.gc === 'function') {
    // Two passes: the first can leave weakly held and finalizable objects for the second.
    globalThis.gc()
    globalThis.gc()
  }
  const memory = process.memoryUsage()
  process.send({
    type: 'sample',
    id: message.id,
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    heapTotal: memory.heapTotal,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    // Physical size per V8 space, to tell committed-but-free heap and code from live objects.
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map(s => [s.space_name, s.physical_space_size])),
    loopP99Ms: delay.percentile(99) / 1e6,
    loopMaxMs: delay.max / 1e6
  })
  if (message.reset === true) delay.reset()
})
