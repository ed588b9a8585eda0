/** The request shapes the proxy sends upstream, and its answers to mocked upstream responses (msw). */
import { createGateway } from '@ai4ts/gateway';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NAMED_ANSWER, TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { readChunks } from './helpers.js';

const UPSTREAM = 'http://daemon.test/chat';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

interface Seen {
  headers: Headers;
  body: unknown;
}

function daemon(answer: string, status = 200): Seen[] {
  const seen: Seen[] = [];
  server.use(
    http.post(UPSTREAM, async ({ request }) => {
      seen.push({ headers: request.headers, body: await request.json() });
      return new HttpResponse(answer, { status, headers: { 'content-type': 'text/event-stream' } });
    }),
  );
  return seen;
}

const ask = (body: Record<string, unknown>, token = 'client-key') =>
  new Request('http://proxy.test/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Hello?' }], ...body }),
  });

describe('upstream requests', () => {
  it('typed: posts {message, session_id} with the upstream token only, and accepts SSE', async () => {
    const seen = daemon(TYPED_ANSWER);
    const proxy = createGateway({
      upstream: UPSTREAM,
      dialect: 'typed',
      auth: 'client-key',
      upstreamToken: 'daemon-key',
    });
    const response = await proxy.fetch(ask({ stream: true, user: 'u-1', metadata: { session_id: 'meta-1' } }));
    expect(readChunks(await response.text()).done).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.body).toEqual({ message: 'Hello?', session_id: 'meta-1' });
    expect(seen[0]?.headers.get('authorization')).toBe('Bearer daemon-key');
    expect(seen[0]?.headers.get('content-type')).toBe('application/json');
    expect(seen[0]?.headers.get('accept')).toBe('text/event-stream');
  });

  it('sends no Authorization upstream without --upstream-token, never the client token', async () => {
    const seen = daemon(NAMED_ANSWER);
    const proxy = createGateway({ upstream: UPSTREAM, dialect: 'named', auth: 'client-key' });
    const completion = await (await proxy.fetch(ask({}))).json();
    expect(completion.choices[0].message.content).toBe('Hello, world');
    expect(seen[0]?.headers.get('authorization')).toBeNull();
    expect(seen[0]?.body).toMatchObject({ message: 'Hello?', attachments: null, session_id: completion.session_id });
  });

  it('maps a 503 from the daemon to a 502 in OpenAI shape', async () => {
    daemon('{"detail":"warming up"}', 503);
    const proxy = createGateway({ upstream: UPSTREAM, dialect: 'typed' });
    const response = await proxy.fetch(ask({ stream: true }));
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({
      error: { message: 'The upstream answered 503 warming up', type: 'upstream_error', param: null, code: null },
    });
  });
});
