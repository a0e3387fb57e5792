import t from 'tap'
import { acceptsEventStream } from '../../plugins/sse.js'

t.test('Accept is read leniently: missing, empty, wildcards and event-stream accept SSE', async (t) => {
  const accepted = [undefined, '', '*/*', 'text/*', 'application/json, text/event-stream', 'text/event-stream;q=0.5']
  const refused = ['application/json', 'application/json; charset=utf-8']

  t.same(accepted.map(acceptsEventStream), accepted.map(() => true))
  t.same(refused.map(acceptsEventStream), refused.map(() => false))
})
