/**
 * `translate: true`: a protocol client whose provider speaks another protocol, translated in-process by the gateway's
 * codecs. Each result is compared with the same request through a gateway server in front of the same scripted
 * upstream: in-process translation is the gateway's, without the server.
 */
import type { ChatCompletion } from '@ai4ts/chat';
import { ApiError, AuthenticationError, resultInfo } from '@ai4ts/core';
import { type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { agentQuestion, agentScript, type MockModel, startMockModel } from '@ai4ts/testing';
import { Ai4ts, } from 'ai4ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_ANSWER, AGENT_TOOLS } from './agent-tools.js';
import * as z from 'zod';

let model: MockModel;
const gateways: ListeningGateway[] = [];

beforeAll(async () => {
  model = await startMockModel({
    script: (body, context) => (Array.isArray(body.tools) ? agentScript(body, context) : { content: 'Hello from the other protocol' }),
    seed: 5,
  });
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await model.close();
});

const tools = AGENT_TOOLS;

function anthropic(extra: Partial<ConstructorParameters<typeof Ai4ts>[0]> = {}): Ai4ts {
  return new Ai4ts({ provider: 'anthropic', baseURL: model.baseURL, apiKey: 'sk-ant-secret-key', translate: true, ...extra });
}

/** The parts of a completion that do not change between two calls (ids and times do). */
function stable(completion: ChatCompletion) {
  return { model: completion.model, choices: completion.choices, usage: completion.usage };
}

describe('translate: true', () => {
  it('a Chat Completions request to a Messages provider gives what a gateway server gives, sent natively', async () => {
    const request = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'Hi' }] };
    const before = model.requests.length;
    const translated = await anthropic().chat.create(request);
    const sent = model.requests.slice(before);
    expect(sent.map((r) => r.path)).toEqual(['/v1/messages']);
    expect(sent[0]?.headers['x-api-key']).toBe('sk-ant-secret-key');
    expect(translated.choices[0]?.message.content).toBe('Hello from the other protocol');

    const server = await listenGateway({ upstream: model.baseURL, upstreamProtocol: 'messages', upstreamToken: 'sk-ant-secret-key' });
    gateways.push(server);
    const through = await new Ai4ts({ provider: 'openai', baseURL: `${server.url}/v1`, apiKey: 'unused' }).chat.create(request);
    expect(stable(translated)).toEqual(stable(through));
  });

  it('streams and runs the tool loop through the translation, to a Messages and to a Gemini provider', async () => {
    for (const client of [
      anthropic(),
      new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'AIza-secret', translate: true }),
    ]) {
      const before = model.requests.length;
      const stream = client.chat.stream({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: agentQuestion }],
        tools,
        maxSteps: 5,
      });
      const deltas: string[] = [];
      stream.on('content', (event) => deltas.push(event.delta));
      const result = await stream.final();
      expect(result.text).toBe(AGENT_ANSWER);
      expect(result.steps).toHaveLength(3);
      expect(deltas.join('')).toContain('Zürich');
      const paths = model.requests.slice(before).map((r) => r.path);
      expect(paths).toHaveLength(3);
      expect(paths.every((path) => path === '/v1/messages' || /^\/v1beta\/models\/[^/]+:streamGenerateContent$/.test(path))).toBe(true);
    }
  });

  it('a Responses request to a Messages provider, and the protocols a provider serves are not translated', async () => {
    const before = model.requests.length;
    const response = await anthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'Hi' });
    expect(response.output_text).toBe('Hello from the other protocol');
    expect(model.requests.slice(before).map((r) => r.path)).toEqual(['/v1/messages']);

    const openai = new Ai4ts({ provider: 'openai', baseURL: model.baseURL, apiKey: 'sk-openai', translate: true });
    await openai.responses.create({ model: 'gpt-5', input: 'Hi' });
    await openai.chat.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'Hi' }] });
    await openai.messages.create({ model: 'gpt-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(model.requests.slice(before + 1).map((r) => r.path)).toEqual(['/v1/responses', '/v1/chat/completions', '/v1/chat/completions']);
  });

  it('structured output through the translation: the schema reaches the Messages API in its own field', async () => {
    const City = z.object({ city: z.string(), population: z.number() });
    const structured = await startMockModel({ script: () => ({ content: '{"city":"Paris","population":2102650}' }) });
    try {
      const client = new Ai4ts({ provider: 'anthropic', baseURL: structured.baseURL, apiKey: 'sk-ant-test-key', translate: true });
      const result = await client.chat.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Largest city?' }], output: City });
      expect(result.object).toEqual({ city: 'Paris', population: 2102650 });
      const body = structured.requests[0]?.body as Record<string, unknown>;
      expect(JSON.stringify(body.output_config ?? body.tools)).toContain('population');
    } finally {
      await structured.close();
    }
  });

  it("a Responses tool loop to a Messages provider continues through the translator's own response store", async () => {
    const before = model.requests.length;
    const result = await anthropic().responses.create({ model: 'claude-sonnet-4-5', input: agentQuestion, tools, maxSteps: 5 });
    expect(result.text).toBe(AGENT_ANSWER);
    const sent = model.requests.slice(before);
    expect(sent.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages', '/v1/messages']);
    // Each later step reached Anthropic as the whole conversation, every tool_use answered by its tool_result.
    const last = sent[2]?.body as { messages: { role: string }[] };
    expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  });

  it('names what it could not carry in resultInfo(result).dropped and a warning, and middleware sees the client protocol', async () => {
    const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }),
      error: () => undefined,
    };
    const client = anthropic({ logger, logLevel: 'warn' });
    const seen: string[] = [];
    client.use(async (ctx, next) => {
      seen.push(ctx.protocol);
      return next();
    });
    const completion = await client.chat.create({ model: 'claude-sonnet-4-5', seed: 7, messages: [{ role: 'user', content: 'Hi' }] });
    expect(resultInfo(completion)?.dropped).toEqual(['seed']);
    expect(warnings).toEqual([
      { message: 'ai4ts: request fields dropped in translation', fields: { protocol: 'chat', model: 'claude-sonnet-4-5', dropped: ['seed'] } },
    ]);
    expect(seen).toEqual(['chat']);
    const plain = await client.chat.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] });
    expect(resultInfo(plain)?.dropped).toEqual([]);
  });

  it("a provider's refusal is the client's typed error, with neither key in it", async () => {
    const refusing = await startMockModel({ script: () => ({
        httpError: { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'bad key sk-ant-secret-key' } } },
      }) });
    try {
      const client = new Ai4ts({ provider: 'anthropic', baseURL: refusing.baseURL, apiKey: 'sk-ant-secret-key', translate: true, maxRetries: 2 });
      const error = await client.chat.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
      // The provider's own status, as without translation: the key is the caller's, and a 401 is not retried.
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({ status: 401 });
      expect(refusing.requests).toHaveLength(1);
      expect(String(error)).not.toContain('sk-ant-secret-key');
      expect(JSON.stringify(error)).not.toContain('sk-ant-secret-key');
    } finally {
      await refusing.close();
    }
  });

  it("the provider's 503 and its Retry-After reach the client's own retry policy, which asks again", async () => {
    const retries: number[] = [];
    const flaky = await startMockModel({
      script: (_body, context) =>
        context.step === 1 ? { httpError: { status: 503 } } : { content: 'Back again' },
    });
    try {
      const client = new Ai4ts({ provider: 'anthropic', baseURL: flaky.baseURL, apiKey: 'sk-ant-test-key', translate: true, onRetry: (error, attempt) => void retries.push(error instanceof ApiError ? (error.status ?? 0) : -1, attempt), backoff: { initialMs: 1 } });
      const completion = await client.chat.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] });
      expect(completion.choices[0]?.message.content).toBe('Back again');
      expect(flaky.requests).toHaveLength(2);
      expect(retries).toEqual([503, 1]);
    } finally {
      await flaky.close();
    }
  });

  it('a preset that needs a key it does not have fails each call saying so, without sending anything', async () => {
    const before = model.requests.length;
    const client = new Ai4ts({ provider: { name: 'keyed', baseURL: model.baseURL, apiKeyEnv: ['AI4TS_TEST_UNSET_KEY'], auth: 'x-api-key', protocol: 'messages', quirks: { streamOptions: false } }, translate: true });
    const error = await client.chat.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(String(error)).toMatch(/translate: true cannot reach keyed: .*AI4TS_TEST_UNSET_KEY/);
    expect(model.requests.length).toBe(before);
  });
});
