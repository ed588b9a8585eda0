import { connectSse, type SseEvent } from '@ai4ts/sse';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

const URL = 'https://sse.test/v1/stream';
const requests: Request[] = [];
const server = setupServer(
  http.post(URL, ({ request }) => {
    requests.push(request.clone());
    if (requests.length > 2) return new HttpResponse(null, { status: 204 });
    const id = requests.length;
    return new HttpResponse(`retry: 1\nid: ${id}\ndata: {"n":${id}}\n\n`, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    });
  }),
);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  requests.length = 0;
});
afterAll(() => server.close());

it('sends the request the caller built, plus Accept and Last-Event-ID, on every attempt', async () => {
  const events: SseEvent[] = [];
  const input = new Request(URL, { method: 'POST', headers: { authorization: 'Bearer k' }, body: '{"stream":true}' });
  for await (const event of connectSse(input, { headers: { authorization: 'Bearer k', 'x-trace': 't1' } })) events.push(event);

  expect(events).toStrictEqual([
    { event: 'message', data: '{"n":1}', id: '1' },
    { event: 'message', data: '{"n":2}', id: '2' },
  ]);
  expect(requests).toHaveLength(3);
  for (const request of requests) {
    expect(request.method).toBe('POST');
    expect(request.headers.get('accept')).toBe('text/event-stream');
    expect(request.headers.get('authorization')).toBe('Bearer k');
    expect(request.headers.get('x-trace')).toBe('t1');
    expect(await request.text()).toBe('{"stream":true}');
  }
  expect(requests.map((r) => r.headers.get('last-event-id'))).toEqual([null, '1', '2']);
});
