/**
 * Structured output through the gateway, on every upstream protocol: openai-node's `chat.completions.parse` with
 * `zodResponseFormat` and `responses.parse` with `zodTextFormat` get their parsed object, because the schema reached
 * the upstream in its own field (`response_format`, `text.format`, `output_config.format`,
 * `generationConfig.responseJsonSchema`), and a JSON mode without a schema is named where the target has none.
 */
import type { GatewayProtocol, } from '@ai4ts/gateway';
import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { describe, expect, it } from 'vitest';
import { gatewayPerProtocol, PROTOCOLS } from './fidelity-helpers.js';
import { z } from 'zod';

const Weather = z.object({ city: z.string(), celsius: z.number() });
const OBJECT = { city: 'Paris', celsius: 18 };

/** Where each upstream protocol's request carries the schema. */
function schemaSent(protocol: GatewayProtocol, body: Record<string, unknown>): unknown {
  const at = (value: unknown, ...path: string[]): unknown =>
    path.reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? Reflect.get(node, key) : undefined), value);
  switch (protocol) {
    case 'chat':
      return at(body, 'response_format', 'json_schema', 'schema');
    case 'responses':
      return at(body, 'text', 'format', 'schema');
    case 'messages':
      return at(body, 'output_config', 'format', 'schema');
    case 'gemini':
      return at(body, 'generationConfig', 'responseJsonSchema');
  }
}

const upstreams = gatewayPerProtocol({ script: () => ({ object: OBJECT }) });

describe.each(PROTOCOLS)('to a %s upstream', (protocol) => {
  const setup = () => {
    const upstream = upstreams.get(protocol);
    if (!upstream) throw new Error('no upstream');
    const client = new OpenAI({ baseURL: `${upstream.gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const lastBody = () => upstream.model.requests.at(-1)?.body as Record<string, unknown>;
    return { client, lastBody };
  };

  it('chat.completions.parse(zodResponseFormat(...)): the parsed object, the schema sent upstream', async () => {
    const { client, lastBody } = setup();
    const completion = await client.chat.completions.parse({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect(completion.choices[0]?.message.parsed).toEqual(OBJECT);
    expect(schemaSent(protocol, lastBody())).toMatchObject({ type: 'object', properties: { city: { type: 'string' } } });
  });

  it('responses.parse(zodTextFormat(...)): the parsed object, the schema sent upstream', async () => {
    const { client, lastBody } = setup();
    const response = await client.responses.parse({
      model: 'gpt-test',
      input: 'Weather in Paris?',
      text: { format: zodTextFormat(Weather, 'weather') },
    });
    expect(response.output_parsed).toEqual(OBJECT);
    expect(schemaSent(protocol, lastBody())).toMatchObject({ type: 'object', properties: { celsius: { type: 'number' } } });
  });

  it('streamed: chat.completions.stream with a zod format parses the joined deltas', async () => {
    const { client } = setup();
    const stream = client.chat.completions.stream({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect((await stream.finalChatCompletion()).choices[0]?.message.parsed).toEqual(OBJECT);
  });

  it('JSON mode without a schema: carried where the target has it, named in x-ai4ts-dropped where not', async () => {
    const upstream = upstreams.get(protocol);
    if (!upstream) throw new Error('no upstream');
    const response = await fetch(`${upstream.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'JSON please' }], response_format: { type: 'json_object' } }),
    });
    expect(response.status).toBe(200);
    await response.json();
    expect(response.headers.get('x-ai4ts-dropped')).toBe(protocol === 'messages' ? 'response_format' : null);
  });
});

it('a wrongly typed response_format is a 400 naming it, in the inbound shape', async () => {
  const upstream = upstreams.get('messages');
  if (!upstream) throw new Error('no upstream');
  const response = await fetch(`${upstream.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], response_format: { type: 'json_schema', json_schema: 'weather' } }),
  });
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ error: { param: 'response_format.json_schema', type: 'invalid_request_error' } });
});
