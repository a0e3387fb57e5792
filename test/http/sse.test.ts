import t from 'tap'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { acceptsEventStream, acceptsJson, endStream, writeComment, writeEvent, writePriming } from '../../src/http/sse.js'

t.test('Accept is read leniently: missing, empty, wildcards and event-stream accept SSE', async (t) => {
  const accepted = [undefined, '', '*/*', 'text/*', 'application/json, text/event-stream', 'text/event-stream;q=0.5']
  const refused = ['application/json', 'application/json; charset=utf-8']

  t.same(accepted.map(acceptsEventStream), accepted.map(() => true))
  t.same(refused.map(acceptsEventStream), refused.map(() => false))
})

t.test('acceptsJson: missing, empty, wildcards and application/json take JSON; event-stream alone does not', async (t) => {
  const accepted = [undefined, '', '*/*', 'application/*', 'application/json', 'text/event-stream, application/json']

  t.same(accepted.map(acceptsJson), accepted.map(() => true))
  t.equal(acceptsJson('text/event-stream'), false)
})

t.test('writes to a response that has ended are dropped, never thrown', async (t) => {
  const raw = new ServerResponse(new IncomingMessage(new Socket()))
  raw.end()

  t.doesNotThrow(() => {
    writeEvent(raw, '{}', 's.1')
    writePriming(raw, 's.0')
    writeComment(raw, 'ping')
    endStream(raw)
  })
})
