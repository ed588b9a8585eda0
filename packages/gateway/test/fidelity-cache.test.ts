/**
 * Prompt caching through the gateway: Messages' `cache_control` markers reach a Messages upstream where the client put
 * them (and are named in `x-ai4ts-dropped` for upstreams without markers), and cache usage comes back to every
 * client in its own fields: Chat's and Responses' `cached_tokens` (in the prompt tokens), Messages'
 * `cache_read_input_tokens` / `cache_creation_input_tokens` (apart from `input_tokens`), Gemini's
 * `cachedContentTokenCount`. Streamed Chat upstreams are always asked for usage.
 */
import type { GatewayProtocol, } from '@ai4ts/gateway';
import { describe, expect, it } from 'vitest';
import { gatewayPerProtocol, PROTOCOLS } from './fidelity-helpers.js';

const USAGE = {
  prompt_tokens: 100,
  completion_tokens: 10,
  total_tokens: 110,
  prompt_tokens_details: { cached_tokens: 60, cache_creation_tokens: 30 },
};
const EPHEMERAL = { type: 'ephemeral' };

const upstreams = gatewayPerProtocol({ script: () => ({ content: 'Cached.', usage: USAGE }) });

function upstreamOf(protocol: GatewayProtocol) {
  const upstream = upstreams.get(protocol);
  if (!upstream) throw new Error('no upstream');
  return upstream;
}

async function post(protocol: GatewayProtocol, path: string, body: unknown) {
  const response = await fetch(`${upstreamOf(protocol).gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return { json: (await response.json()) as Record<string, unknown>, dropped: response.headers.get('x-ai4ts-dropped') };
}

const MARKED = {
  model: 'claude-test',
  max_tokens: 100,
  system: [{ type: 'text', text: 'A long, stable system prompt.', cache_control: EPHEMERAL }],
  tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: EPHEMERAL }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
};

describe.each(PROTOCOLS)('to a %s upstream', (protocol) => {
  it('cache_control markers: where the client put them on Messages, named elsewhere', async () => {
    const { dropped } = await post(protocol, '/v1/messages', MARKED);
    const body = upstreamOf(protocol).model.requests.at(-1)?.body;
    if (protocol === 'messages') {
      expect(dropped).toBeNull();
      expect(body).toMatchObject({
        system: [{ type: 'text', text: 'A long, stable system prompt.', cache_control: EPHEMERAL }],
        tools: [{ name: 'lookup', cache_control: EPHEMERAL }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      });
    } else {
      expect(dropped).toBe('cache_control');
      expect(JSON.stringify(body)).not.toContain('cache_control');
    }
  });

  // Responses and Gemini upstreams report cache reads only.
  const written = protocol === 'chat' || protocol === 'messages' ? 30 : undefined;

  it('cache usage in every client protocol', async () => {
    const chat = await post(protocol, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
    expect(chat.json.usage).toMatchObject({ prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 60 } });

    const responses = await post(protocol, '/v1/responses', { model: 'm', input: 'Hi' });
    expect(responses.json.usage).toMatchObject({ input_tokens: 100, input_tokens_details: { cached_tokens: 60 }, total_tokens: 110 });

    const messages = await post(protocol, '/v1/messages', { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    expect(messages.json.usage).toEqual({
      input_tokens: 100 - 60 - (written ?? 0),
      output_tokens: 10,
      cache_read_input_tokens: 60,
      ...(written !== undefined && { cache_creation_input_tokens: written }),
    });

    const gemini = await post(protocol, '/v1beta/models/m:generateContent', { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
    expect(gemini.json.usageMetadata).toMatchObject({ promptTokenCount: 100, cachedContentTokenCount: 60, totalTokenCount: 110 });
  });
});

it('a streamed Chat upstream is always asked for usage, and a client that asked gets it with its cached tokens', async () => {
  const response = await fetch(`${upstreamOf('chat').gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  const text = await response.text();
  expect(upstreamOf('chat').model.requests.at(-1)?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  const usage = text
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as { usage?: unknown })
    .findLast((chunk) => chunk.usage)?.usage;
  expect(usage).toMatchObject({ prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 60 } });
});

it('a cache_control that is not a marker is a 400 naming it, in the inbound shape', async () => {
  const response = await fetch(`${upstreamOf('messages').gateway.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'forever' } }] }],
    }),
  });
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('cache_control') } });
});
