import {
  type BridgeEvent,
  readNamedEventDialect,
  readTypedEventDialect,
  toNamedEventSse,
  toOpenAICompletion,
  toOpenAISse,
} from '@ai4ts/bridge';
import { ApiError, StreamIncompleteError } from '@ai4ts/core';
import { encodeSse, type SseMessage } from '@ai4ts/sse';
import { drain, sseFrame, streamOf } from '@ai4ts/test-kit';
import { describe, expect, it } from 'vitest';
import { NAMED_ANSWER, TYPED_ANSWER } from './helpers.js';

async function collect(messages: AsyncIterable<SseMessage>): Promise<{ messages: SseMessage[]; error?: unknown }> {
  const out: SseMessage[] = [];
  try {
    for await (const message of messages) out.push(message);
    return { messages: out };
  } catch (error) {
    return { messages: out, error };
  }
}

const json = (messages: SseMessage[]) => messages.map((m) => (m.data === '[DONE]' ? '[DONE]' : JSON.parse(m.data)));

async function* from(events: BridgeEvent[], failure?: Error): AsyncGenerator<BridgeEvent> {
  yield* events;
  if (failure) throw failure;
}

const FIXED = { id: 'chatcmpl-1', model: 'm', created: 1 };

describe('toOpenAISse', () => {
  it('writes each chunk as the canonical JSON text of its object, members in OpenAI order, with and without usage', async () => {
    const events: BridgeEvent[] = [
      { type: 'content', delta: 'a "q" \u00e9\n', snapshot: 'a "q" \u00e9\n', choice: 0 },
      { type: 'content', delta: 'b', snapshot: 'a "q" \u00e9\nb', choice: 0 },
    ];
    for (const includeUsage of [false, true]) {
      const { messages } = await collect(
        toOpenAISse(from(events), {
          id: 'chatcmpl-"1"',
          model: 'm\\x',
          created: 7,
          includeUsage,
        }),
      );
      const deltas = [{ role: 'assistant', content: 'a "q" \u00e9\n' }, { content: 'b' }];
      const usage = includeUsage ? { usage: null } : {};
      expect(messages.slice(0, 2).map((m) => m.data)).toEqual(
        deltas.map((delta) =>
          JSON.stringify({
            id: 'chatcmpl-"1"',
            object: 'chat.completion.chunk',
            created: 7,
            model: 'm\\x',
            choices: [{ index: 0, delta, finish_reason: null, logprobs: null }],
            ...usage,
          }),
        ),
      );
    }
  });

  it('writes the typed answer as OpenAI chunks: daemon tools in the vendor field, usage summed, [DONE]', async () => {
    const { messages, error } = await collect(
      toOpenAISse(readTypedEventDialect(streamOf([TYPED_ANSWER])), { ...FIXED, includeUsage: true }),
    );
    expect(error).toBeUndefined();
    const chunks = json(messages);
    expect(chunks.at(-1)).toBe('[DONE]');
    const body = chunks.slice(0, -1);
    for (const chunk of body)
      expect(chunk).toMatchObject({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm' });
    const deltas = body.filter((c) => c.choices.length > 0).map((c) => c.choices[0].delta);
    expect(deltas).toEqual([
      { role: 'assistant', reasoning_content: 'Let me ' },
      { reasoning_content: 'check.' },
      { daemon_tools: [{ index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      {
        daemon_tools: [
          { index: 0, id: 'call_1', name: 'get_weather', output: '18C', is_error: false, duration_ms: 42 },
        ],
      },
      { reasoning_content: ' Now answer.' },
      { content: 'It is ' },
      { content: '18C in Paris.' },
      {
        daemon_tools: [
          {
            index: 0,
            id: 'call_1',
            name: 'get_weather',
            arguments: '{"city":"Paris"}',
            output: '18C',
            is_error: false,
            duration_ms: 42,
          },
        ],
      },
    ]);
    expect(JSON.stringify(body)).not.toContain('tool_calls');
    const finish = body.at(-2);
    expect(finish.choices[0].finish_reason).toBe('stop');
    expect(finish.session_id).toBe('daemon-session');
    expect(body.slice(0, -2).every((c) => c.choices[0].finish_reason === null && c.usage === null)).toBe(true);
    expect(body.at(-1)).toEqual({
      ...{ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm' },
      choices: [],
      usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
      session_id: 'daemon-session',
    });
  });

  it('sends no usage chunk unless asked, and none for the named dialect even when asked', async () => {
    const typedChunks = json((await collect(toOpenAISse(readTypedEventDialect(streamOf([TYPED_ANSWER]))))).messages);
    expect(typedChunks.some((c) => c !== '[DONE]' && 'usage' in c)).toBe(false);
    const namedChunks = json(
      (await collect(toOpenAISse(readNamedEventDialect(streamOf([NAMED_ANSWER])), { includeUsage: true }))).messages,
    );
    expect(namedChunks.filter((c) => c !== '[DONE]' && c.choices.length === 0)).toEqual([]);
    expect(namedChunks.filter((c) => c !== '[DONE]').map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant', content: 'Hello' },
      { content: ', world' },
      {},
    ]);
    expect(namedChunks.at(-1)).toBe('[DONE]');
  });

  it('writes client tool calls as tool_calls with an index per call and finish_reason tool_calls', async () => {
    const events: BridgeEvent[] = [
      { type: 'tool_call.start', index: 0, id: 'a', name: 'f', choice: 0 },
      { type: 'tool_call.delta', index: 0, id: 'a', delta: '{"x":', choice: 0 },
      { type: 'tool_call.start', index: 1, id: 'b', name: 'g', choice: 0 },
      { type: 'tool_call.delta', index: 0, id: 'a', delta: '1}', choice: 0 },
      { type: 'tool_call.done', index: 0, id: 'a', name: 'f', arguments: '{"x":1}', choice: 0 },
      { type: 'tool_call.done', index: 1, id: 'b', name: 'g', arguments: '{}', choice: 0 },
      { type: 'finish', finishReason: 'stop', choice: 0 },
    ];
    const chunks = json((await collect(toOpenAISse(from(events), { toolCalls: 'client' }))).messages);
    expect(chunks.slice(0, -1).map((c) => c.choices[0].delta)).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] },
      { tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '1}' } }] },
      {},
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
  });

  it('writes an error chunk and no [DONE] when the stream fails after output began', async () => {
    const body =
      sseFrame({ type: 'text', content: 'Partial' }) + sseFrame({ type: 'error', message: 'daemon failed', code: 'boom' });
    const { messages, error } = await collect(toOpenAISse(readTypedEventDialect(streamOf([body]))));
    expect(error).toBeUndefined();
    const chunks = json(messages);
    expect(chunks).toHaveLength(2);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: 'Partial' });
    expect(chunks[1]).toEqual({
      error: { message: 'daemon failed', type: 'upstream_error', param: null, code: 'boom' },
    });
  });

  it('writes a cut stream as an error chunk with code stream_incomplete', async () => {
    const chunks = json(
      (await collect(toOpenAISse(readTypedEventDialect(streamOf([sseFrame({ type: 'text', content: 'x' })]))))).messages,
    );
    expect(chunks.at(-1)).toMatchObject({ error: { type: 'upstream_error', code: 'stream_incomplete' } });
    expect(chunks).not.toContain('[DONE]');
  });

  it('throws a failure that comes before any output (so a server can answer with an HTTP error)', async () => {
    const body = sseFrame({ message_id: 'm' }, 'start') + sseFrame({ error: 'no', type: 'denied' }, 'error');
    const { messages, error } = await collect(toOpenAISse(readNamedEventDialect(streamOf([body]))));
    expect(messages).toEqual([]);
    expect(error).toBeInstanceOf(ApiError);
  });

  it('treats an error event from any source as a failure', async () => {
    const failure = new ApiError('late failure');
    const events: BridgeEvent[] = [
      { type: 'content', delta: 'a', snapshot: 'a', choice: 0 },
      { type: 'error', error: failure },
      { type: 'content', delta: 'b', snapshot: 'ab', choice: 0 },
    ];
    const chunks = json((await collect(toOpenAISse(from(events)))).messages);
    expect(chunks).toHaveLength(2);
    expect(chunks[1].error.message).toBe('late failure');
  });
});

describe('toOpenAICompletion', () => {
  it('aggregates the typed answer into one chat.completion', async () => {
    const completion = await toOpenAICompletion(readTypedEventDialect(streamOf([TYPED_ANSWER])), FIXED);
    expect(completion).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      session_id: 'daemon-session',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'It is 18C in Paris.',
            reasoning_content: 'Let me check. Now answer.',
            daemon_tools: [
              {
                id: 'call_1',
                name: 'get_weather',
                arguments: '{"city":"Paris"}',
                output: '18C',
                is_error: false,
                duration_ms: 42,
              },
            ],
          },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
    });
  });

  it("uses done's usage when no round reported any, and the request's session id when the daemon names none", async () => {
    const body =
      sseFrame({ type: 'text', content: 'x' }) + sseFrame({ type: 'done', tokens: { prompt: 1, completion: 2, total: 3 } });
    const completion = await toOpenAICompletion(readTypedEventDialect(streamOf([body])), { sessionId: 'from-request' });
    expect(completion.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    expect(completion.session_id).toBe('from-request');
  });

  it('has content null and no reasoning_content when none arrived', async () => {
    const body = sseFrame({ message_id: null }, 'start') + sseFrame({ message_id: null }, 'done');
    const completion = await toOpenAICompletion(readNamedEventDialect(streamOf([body])));
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: null });
    expect(completion.usage).toBeUndefined();
  });

  it('throws with the partial completion when the stream fails', async () => {
    const body = sseFrame({ type: 'reasoning', content: 'r' }) + sseFrame({ type: 'text', content: 'half' });
    const error = await toOpenAICompletion(readTypedEventDialect(streamOf([body])), FIXED).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect((error as StreamIncompleteError).partial).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'half', reasoning_content: 'r' },
          finish_reason: null,
          logprobs: null,
        },
      ],
    });
  });

  it('reports client tool calls as tool_calls with finish_reason tool_calls', async () => {
    const events: BridgeEvent[] = [
      { type: 'tool_call.start', index: 0, id: 'a', name: 'f', choice: 0 },
      { type: 'tool_call.done', index: 0, id: 'a', name: 'f', arguments: '{}', choice: 0 },
    ];
    const completion = await toOpenAICompletion(from(events), { toolCalls: 'client' });
    expect(completion.choices[0].message.tool_calls).toEqual([
      { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
    ]);
    expect(completion.choices[0].message.daemon_tools).toBeUndefined();
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
  });
});

describe('toNamedEventSse', () => {
  it('round-trips the named dialect', async () => {
    const { messages } = await collect(toNamedEventSse(readNamedEventDialect(streamOf([NAMED_ANSWER]))));
    expect(messages.map((m) => m.event)).toEqual(['start', 'message', 'message', 'done']);
    expect(messages.map((m) => m.data)).toEqual([
      '{"message_id":"m-1"}',
      '{"content":"Hello"}',
      '{"content":", world"}',
      '{"message_id":"m-1"}',
    ]);
    const again = await drain(readNamedEventDialect(streamOf(messages.map(encodeSse))));
    expect(again).toEqual(await drain(readNamedEventDialect(streamOf([NAMED_ANSWER]))));
  });

  it('writes the typed answer as text only, with a message id, and null when nothing was produced', async () => {
    const { messages } = await collect(
      toNamedEventSse(readTypedEventDialect(streamOf([TYPED_ANSWER])), { messageId: 'x' }),
    );
    expect(messages).toEqual([
      { event: 'start', data: '{"message_id":"x"}' },
      { event: 'message', data: '{"content":"It is "}' },
      { event: 'message', data: '{"content":"18C in Paris."}' },
      { event: 'done', data: '{"message_id":"x"}' },
    ]);
    const empty = await collect(toNamedEventSse(from([{ type: 'finish', finishReason: 'stop', choice: 0 }])));
    expect(empty.messages).toEqual([
      { event: 'start', data: '{"message_id":null}' },
      { event: 'done', data: '{"message_id":null}' },
    ]);
  });

  it('writes a failure after start as an error event, and no done', async () => {
    const body = sseFrame({ message_id: 'm' }, 'start') + sseFrame({ error: 'quota exceeded', type: 'quota' }, 'error');
    const { messages, error } = await collect(toNamedEventSse(readNamedEventDialect(streamOf([body]))));
    expect(error).toBeUndefined();
    expect(messages).toEqual([
      { event: 'start', data: '{"message_id":"m"}' },
      { event: 'error', data: '{"error":"quota exceeded","type":"quota"}' },
    ]);
  });
});
