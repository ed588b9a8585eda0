/**
 * What a client sees when things go wrong: the Responses `error` event in the flat form (openai-node, @ai-sdk/openai
 * 3.x) and the nested one (@ai-sdk/openai 2.x) at once, `response.failed` with the output that streamed before the
 * failure, a wrong `x-api-key` told about `x-api-key`, `/v1/models` listing only what a POST routes, and a preset
 * without its key refused at the start.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { type ListeningGateway, createGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { streamText } from 'ai';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** A gateway in front of a scripted model whose answer fails after reasoning and some text. */
async function failing(): Promise<{ model: MockModel; gateway: ListeningGateway }> {
  const model = await startMockModel({
    script: () => ({ reasoning: 'Thinking it over.', content: 'Partial answer', streamError: { message: 'model overloaded' } }),
  });
  open.push(model);
  const gateway = await listenGateway({ upstream: model.baseURL, upstreamProtocol: 'chat', auth: 'sk-gateway', upstreamToken: 'sk-up' });
  open.push(gateway);
  return { model, gateway };
}

/** The data of each SSE event of a body. */
function events(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

describe('a Responses stream that fails after output began', () => {
  it('writes the error event flat and nested, and response.failed with the output so far', async () => {
    const { gateway } = await failing();
    const response = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-gateway', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'Weather?', stream: true }),
    });
    expect(response.status).toBe(200);
    const all = events(await response.text());
    const error = all.find((event) => event.type === 'error');
    expect(error).toEqual({
      type: 'error',
      code: 'server_error',
      message: expect.stringContaining('model overloaded'),
      param: null,
      sequence_number: expect.any(Number),
      error: { type: 'upstream_error', code: 'server_error', message: expect.stringContaining('model overloaded'), param: null },
    });
    const failed = all.at(-1) as { type: string; response: { status: string; output: Record<string, unknown>[] } };
    expect(failed.type).toBe('response.failed');
    expect(failed.response.status).toBe('failed');
    expect(failed.response.output).toEqual([
      expect.objectContaining({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking it over.' }] }),
      expect.objectContaining({
        type: 'message',
        status: 'incomplete',
        content: [expect.objectContaining({ type: 'output_text', text: 'Partial answer' })],
      }),
    ]);
  });

  it('the AI SDK’s OpenAI Responses provider calls onError, and openai-node raises', async () => {
    const { gateway } = await failing();
    const errors: unknown[] = [];
    const result = streamText({
      model: createOpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway' }).responses('m'),
      prompt: 'Weather?',
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(errors[0])).toMatch(/model overloaded/);

    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    await expect(openai.responses.stream({ model: 'm', input: 'Weather?' }).finalResponse()).rejects.toThrow(/model overloaded/);
  });
});

describe('the gateway’s answers about itself', () => {
  it('a wrong x-api-key is told about x-api-key, a wrong bearer about Authorization', async () => {
    const { gateway } = await failing();
    const body = JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const byKey = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'sk-wrong' }, body });
    expect(byKey.status).toBe(401);
    const keyError = (await byKey.json()) as { error: { message: string } };
    expect(keyError.error.message).toContain('x-api-key');
    expect(JSON.stringify(keyError)).not.toContain('sk-wrong');
    const byBearer = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { authorization: 'Bearer sk-wrong' }, body });
    expect(((await byBearer.json()) as { error: { message: string } }).error.message).toContain('Authorization');
  });

  it('/v1/models lists only models a POST routes: no daemon with only a routes file', async () => {
    const model = await startMockModel({ script: () => ({ content: 'hi' }) });
    open.push(model);
    const gateway = await listenGateway({
      routes: [{ model: 'gpt-4o', upstream: model.baseURL, protocol: 'chat' }],
      auth: 'sk-gateway',
    });
    open.push(gateway);
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const ids = (await openai.models.list()).data.map((entry) => entry.id);
    expect(ids).toEqual(['gpt-4o']);
    for (const id of ids) {
      const answer = await openai.chat.completions.create({ model: id, messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.choices[0]?.message.content).toBe('hi');
    }
  });

  it('a provider preset without its key is refused at the start, naming the variable', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      expect(() => createGateway({ provider: 'anthropic' })).toThrow(
        'The anthropic preset needs an API key: set ANTHROPIC_API_KEY, or give upstreamToken',
      );
      expect(() => createGateway({ provider: 'anthropic', upstreamToken: 'sk-ant-test-key' })).not.toThrow();
      // A local server's preset needs none.
      expect(() => createGateway({ provider: 'ollama' })).not.toThrow();
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
