/** Real clients against the proxy fronting a scripted daemon on 127.0.0.1: the official `openai` client, and ours. */
import { type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { collectChatCompletion } from '@ai4ts/chat';
import { ApiError } from '@ai4ts/core';
import { Ai4ts } from 'ai4ts';
import OpenAI from 'openai';
import { sendSse, sseFrame } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { NAMED_ANSWER, TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { type Daemon, startDaemon } from './helpers.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function setup(script: Parameters<typeof startDaemon>[0], dialect: 'typed' | 'named' = 'typed') {
  const daemon: Daemon = await startDaemon(script);
  open.push(daemon);
  const proxy: ListeningGateway = await listenGateway({
    upstream: daemon.url,
    dialect,
    auth: 'sk-proxy',
    upstreamToken: 'daemon-token',
  });
  open.push(proxy);
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-proxy', maxRetries: 0 });
  return { daemon, proxy, client };
}

const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];

/** Extra fields the proxy adds to OpenAI's shapes, read without `any`. */
type WithVendor<T> = T & { session_id?: string };
type VendorDelta = { reasoning_content?: string; daemon_tools?: Array<Record<string, unknown>> };

describe('the official openai client', () => {
  it('streams: content, reasoning_content, the vendor daemon_tools, usage and session_id on the last chunk', async () => {
    const { daemon, client } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const stream = await client.chat.completions.create({
      model: 'daemon',
      messages,
      stream: true,
      stream_options: { include_usage: true },
      user: 'client-session',
    });
    let content = '';
    let reasoning = '';
    const tools: Array<Record<string, unknown>> = [];
    const finishReasons: string[] = [];
    let last: WithVendor<OpenAI.ChatCompletionChunk> | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const delta = choice?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & VendorDelta) | undefined;
      content += delta?.content ?? '';
      reasoning += delta?.reasoning_content ?? '';
      tools.push(...(delta?.daemon_tools ?? []));
      expect(delta?.tool_calls).toBeUndefined();
      if (choice?.finish_reason) finishReasons.push(choice.finish_reason);
      last = chunk;
    }
    expect(content).toBe('It is 18C in Paris.');
    expect(reasoning).toBe('Let me check. Now answer.');
    expect(tools).toEqual([
      { index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { index: 0, id: 'call_1', name: 'get_weather', output: '18C', is_error: false, duration_ms: 42 },
      // the finish chunk repeats every tool, merged
      {
        index: 0,
        id: 'call_1',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        output: '18C',
        is_error: false,
        duration_ms: 42,
      },
    ]);
    expect(finishReasons).toEqual(['stop']);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({ prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
    expect(last?.session_id).toBe('daemon-session');
    expect(daemon.requests[0]?.headers.authorization).toBe('Bearer daemon-token');
    expect(daemon.requests[0]?.body).toEqual({ message: 'Weather in Paris?', session_id: 'client-session' });
  });

  it('aggregates with its stream helper', async () => {
    const { client } = await setup((res) => sendSse(res, NAMED_ANSWER), 'named');
    const runner = client.chat.completions.stream({ model: 'daemon', messages });
    const completion = await runner.finalChatCompletion();
    expect(completion.choices[0]?.message.content).toBe('Hello, world');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
  });

  it('keeps every daemon tool, with arguments and results, through its stream helper (the last delta wins)', async () => {
    const { client } = await setup((res) =>
      sendSse(
        res,
        [
          sseFrame({ type: 'tool_start', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
          sseFrame({ type: 'tool_result', id: 'call_1', name: 'get_weather', output: '18C', success: true }),
          sseFrame({ type: 'tool_start', id: 'call_2', name: 'get_time', arguments: '{"tz":"CET"}' }),
          sseFrame({ type: 'tool_result', id: 'call_2', name: 'get_time', output: '14:00', success: false }),
          sseFrame({ type: 'text', content: 'Done.' }),
          sseFrame({ type: 'done', session_id: 's' }),
        ].join(''),
      ),
    );
    const runner = client.chat.completions.stream({ model: 'daemon', messages });
    const completion = await runner.finalChatCompletion();
    const message = completion.choices[0]?.message as (OpenAI.ChatCompletionMessage & VendorDelta) | undefined;
    expect(message?.content).toBe('Done.');
    expect(message?.daemon_tools).toEqual([
      { index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', output: '18C', is_error: false },
      { index: 1, id: 'call_2', name: 'get_time', arguments: '{"tz":"CET"}', output: '14:00', is_error: true },
    ]);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
  });

  it('gets one completion without streaming, with the x-session-id header', async () => {
    const { client } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const { data, response } = await client.chat.completions.create({ model: 'daemon', messages }).withResponse();
    expect(response.headers.get('x-session-id')).toBe('daemon-session');
    const completion = data as WithVendor<OpenAI.ChatCompletion>;
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('It is 18C in Paris.');
    const message = completion.choices[0]?.message as (OpenAI.ChatCompletionMessage & VendorDelta) | undefined;
    expect(message?.reasoning_content).toBe('Let me check. Now answer.');
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
    expect(completion.session_id).toBe('daemon-session');
  });

  it('throws when the daemon fails after output began, instead of a silent cut', async () => {
    const { client } = await setup((res) =>
      sendSse(res, sseFrame({ type: 'text', content: 'Part' }) + sseFrame({ type: 'error', message: 'crashed' })),
    );
    const stream = await client.chat.completions.create({ model: 'daemon', messages, stream: true });
    let content = '';
    const reading = (async () => {
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    })();
    await expect(reading).rejects.toMatchObject({ message: expect.stringContaining('crashed') });
    expect(content).toBe('Part');
  });

  it('sees typed errors: 401 for a wrong key, 429 with Retry-After, 502 for a daemon error', async () => {
    let status = 200;
    const { proxy, client } = await setup((res) => {
      if (status === 429) {
        res.writeHead(429, { 'retry-after': '3' });
        res.end('busy');
      } else sendSse(res, sseFrame({ type: 'error', message: 'no model loaded' }));
    });
    const wrong = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['daemon']);
    await expect(client.chat.completions.create({ model: 'daemon', messages, stream: true })).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining('no model loaded'),
    });
    status = 429;
    const limited = await client.chat.completions.create({ model: 'daemon', messages }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('3');
  });
});

describe('collectChatCompletion from @ai4ts/chat', () => {
  it("reads the proxy's stream to the same completion", async () => {
    const { proxy } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-proxy' },
      body: JSON.stringify({ model: 'daemon', messages, stream: true, stream_options: { include_usage: true } }),
    });
    const completion = await collectChatCompletion(response);
    expect(completion.choices[0]?.message.content).toBe('It is 18C in Paris.');
    expect(completion.choices[0]?.message.reasoning_content).toBe('Let me check. Now answer.');
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
  });

  it('throws ApiError with the partial completion when the daemon fails mid-stream', async () => {
    const { proxy } = await setup((res) =>
      sendSse(res, sseFrame({ type: 'text', content: 'Part' }) + sseFrame({ type: 'error', message: 'crashed', code: 'oom' })),
    );
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-proxy' },
      body: JSON.stringify({ model: 'daemon', messages, stream: true }),
    });
    const error = await collectChatCompletion(response).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ message: 'crashed', code: 'oom' });
    expect((error as ApiError).partial).toMatchObject({ choices: [{ message: { content: 'Part' } }] });
  });
});

describe('our own client (ai4ts)', () => {
  const ai4ts = (url: string) => new Ai4ts({ baseURL: `${url}/v1`, apiKey: 'sk-proxy', maxRetries: 0 });

  it('streams through client.chat.stream and aggregates to the same completion', async () => {
    const { proxy } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const stream = ai4ts(proxy.url).chat.stream({ model: 'daemon', messages });
    let content = '';
    for await (const event of stream) if (event.type === 'content') content += event.delta;
    const completion = await stream.final();
    expect(content).toBe('It is 18C in Paris.');
    expect(completion.choices[0]?.message.reasoning_content).toBe('Let me check. Now answer.');
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
  });

  it('gets one completion from client.chat.create without streaming', async () => {
    const { proxy } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const completion = await ai4ts(proxy.url).chat.create({ model: 'daemon', messages });
    expect(completion.choices[0]?.message.content).toBe('It is 18C in Paris.');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
  });

  it('rejects with ApiError and the partial text when the daemon fails mid-stream', async () => {
    const { proxy } = await setup((res) =>
      sendSse(res, sseFrame({ type: 'text', content: 'Part' }) + sseFrame({ type: 'error', message: 'crashed', code: 'oom' })),
    );
    const error = await ai4ts(proxy.url)
      .chat.stream({ model: 'daemon', messages })
      .final()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).partial).toMatchObject({ choices: [{ message: { content: 'Part' } }] });
  });
});
