/**
 * `@opentelemetry/api` is an optional peer: here it cannot be imported (as when it is not installed). The gateway
 * without `telemetry` never asks for it and serves as usual; with `telemetry` it answers a 500 that says what to install.
 */
import { listenGateway } from '@ai4ts/gateway';
import { sendSse } from '@ai4ts/test-kit';
import { afterEach, expect, it, vi } from 'vitest';
import { TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { startDaemon } from './helpers.js';

vi.mock('@opentelemetry/api', () => {
  throw new Error("Cannot find package '@opentelemetry/api'");
});

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function ask(url: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    body: JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

it('without telemetry the gateway needs no @opentelemetry/api; with it, requests fail with a 500 naming the package', async () => {
  const daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
  open.push(daemon);
  const plain = await listenGateway({ upstream: daemon.url, dialect: 'typed' });
  open.push(plain);
  const answer = await ask(plain.url);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ choices: [{ message: { content: 'It is 18C in Paris.' } }] });

  const traced = await listenGateway({ upstream: daemon.url, dialect: 'typed', telemetry: {} });
  open.push(traced);
  const refused = await ask(traced.url);
  expect(refused.status).toBe(500);
  expect(await refused.json()).toEqual({
    error: {
      message: 'Telemetry needs the @opentelemetry/api package: npm install @opentelemetry/api',
      type: 'server_error',
      param: null,
      code: 'telemetry_unavailable',
    },
  });
  expect(daemon.requests).toHaveLength(1);
});
