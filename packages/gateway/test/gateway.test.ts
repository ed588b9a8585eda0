/**
 * The gateway beyond the matrix: each protocol's error shape, daemons behind Responses and Messages, what is dropped,
 * the routing table, `/v1/models`, the access log (never a key), `/healthz` and `/readyz`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { type AccessLogEntry, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { startMockModel } from '@ai4ts/testing';
import OpenAI from 'openai';
import { sendSse } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { startDaemon } from './helpers.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function daemonGateway(extra: Partial<Parameters<typeof listenGateway>[0]> = {}) {
  const daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
  open.push(daemon);
  const gateway: ListeningGateway = await listenGateway({ upstream: daemon.url, dialect: 'typed', auth: 'sk-gateway', ...extra });
  open.push(gateway);
  return { daemon, gateway };
}

describe('bad requests, in each protocol’s error shape', () => {
  it('chat and responses answer OpenAI’s shape, messages Anthropic’s; the clients raise their typed errors', async () => {
    const { gateway } = await daemonGateway();
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'sk-gateway', maxRetries: 0 });

    const chat = await openai.chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect(chat).toMatchObject({ status: 400, param: 'messages' });

    const responses = await openai.responses.create({ model: '', input: 'hi' }).catch((e: unknown) => e);
    expect(responses).toBeInstanceOf(OpenAI.BadRequestError);
    expect(responses).toMatchObject({ status: 400, param: 'model' });

    const messages = await anthropic.messages
      .create({ model: 'm', max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(messages).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messages).toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });

    const wrongKey = await new Anthropic({ baseURL: gateway.url, apiKey: 'sk-wrong', maxRetries: 0 }).messages
      .create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(wrongKey).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(JSON.stringify(wrongKey)).not.toContain('sk-wrong');

    const raw = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'sk-gateway' }, body: '{' });
    expect(await raw.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'The request body is not valid JSON', code: 'invalid_json' },
    });
  });

  it('an unknown previous_response_id is the 404 response_not_found (stored responses: responses-store*.test.ts)', async () => {
    const { gateway } = await daemonGateway();
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const error = await openai.responses.create({ model: 'm', input: 'hi', previous_response_id: 'resp_1' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, param: 'previous_response_id', code: 'response_not_found' });
  });
});

describe('a daemon behind Responses and Messages', () => {
  it('streams its reasoning and text to the Anthropic client; its own tools are not client tool calls', async () => {
    const { daemon, gateway } = await daemonGateway();
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: 'sk-gateway', maxRetries: 0 });
    const stream = anthropic.messages.stream({
      model: 'daemon',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me check. Now answer.', signature: '' },
      { type: 'text', text: 'It is 18C in Paris.' },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 12 });
    expect(daemon.requests[0]?.body).toEqual({ message: 'Weather in Paris?' });
  });

  it('aggregates for the openai Responses client, and names what it dropped', async () => {
    const { gateway } = await daemonGateway();
    const response = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-gateway', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'daemon', input: 'Weather?', truncation: 'auto', tools: [{ type: 'web_search' }] }),
    });
    expect(response.headers.get('x-ai4ts-dropped')).toBe('truncation, tools[].web_search');
    const body = (await response.json()) as OpenAI.Responses.Response;
    expect(body.output_text).toBe('It is 18C in Paris.');
    expect(body.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(body.usage).toMatchObject({ input_tokens: 30, output_tokens: 12, total_tokens: 42 });
  });
});

describe('routing, models, logs and health', () => {
  it('routes by model pattern, lists the models, logs each request without a key', async () => {
    const claude = await startMockModel({ script: [{ content: 'from claude' }] });
    const gpt = await startMockModel({ script: [{ content: 'from gpt' }] });
    open.push(claude, gpt);
    const log: AccessLogEntry[] = [];
    const { gateway } = await daemonGateway({
      routes: [
        { model: 'claude-*', upstream: claude.baseURL, protocol: 'messages', upstreamToken: 'sk-ant-secret-key' },
        { model: 'gpt-4o', upstream: gpt.baseURL, protocol: 'chat', upstreamToken: 'sk-openai-secret-key', upstreamModel: 'gpt-4o-2024' },
      ],
      log: (entry) => log.push(entry),
    });
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const a = await openai.chat.completions.create({ model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] });
    const b = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    const c = await openai.chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'hi' }] });
    expect([a, b, c].map((answer) => answer.choices[0]?.message.content)).toEqual(['from claude', 'from gpt', 'It is 18C in Paris.']);
    expect(claude.requests[0]?.headers['x-api-key']).toBe('sk-ant-secret-key');
    expect(claude.requests[0]?.headers['anthropic-version']).toBe('2023-06-01');
    expect(gpt.requests[0]?.headers.authorization).toBe('Bearer sk-openai-secret-key');
    expect(gpt.requests[0]?.body).toMatchObject({ model: 'gpt-4o-2024' });

    const models = await openai.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['daemon', 'gpt-4o']);

    expect(log.map(({ path, protocol, model, upstream, status }) => ({ path, protocol, model, upstream, status }))).toEqual([
      { path: '/v1/chat/completions', protocol: 'chat', model: 'claude-x', upstream: `messages@${new URL(claude.url).host}`, status: 200 },
      { path: '/v1/chat/completions', protocol: 'chat', model: 'gpt-4o', upstream: `chat@${new URL(gpt.url).host}`, status: 200 },
      { path: '/v1/chat/completions', protocol: 'chat', model: 'other', upstream: `typed@${new URL(daemon(open)).host}`, status: 200 },
      { path: '/v1/models', protocol: undefined, model: undefined, upstream: undefined, status: 200 },
    ]);
    expect(log[1]?.tokens).toBeDefined();
    for (const entry of log) {
      expect(entry.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(entry.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(JSON.stringify(log)).not.toMatch(/sk-ant-secret-key|sk-openai-secret-key|sk-gateway/);
  });

  it('/healthz and /readyz answer without a token', async () => {
    const { gateway } = await daemonGateway();
    const health = await fetch(`${gateway.url}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`${gateway.url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready', cooling: [] }]);
  });
});

/** The URL of the daemon among the servers opened (the first one, a `/chat` URL). */
function daemon(servers: ReadonlyArray<{ close(): Promise<void> }>): string {
  const found = servers.find((server): server is { url: string; close(): Promise<void> } => 'url' in server && String(server.url).endsWith('/chat'));
  if (!found) throw new Error('no daemon');
  return found.url;
}
