import Anthropic from '@anthropic-ai/sdk';
import type { MockModel, MockTurn } from '@ai4ts/testing';
import { parseSse } from '@ai4ts/sse';
import { describe, expect, it } from 'vitest';
import { field, mockModels, post, readEvents, text, type WireEvent } from './helpers.js';

const start = mockModels();

const ask = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-test',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

/**
 * Checks a Messages stream the way a strict client would, and joins its deltas: `message_start` first, blocks
 * opened in index order one at a time, every delta of the open block's kind, `message_delta` then `message_stop`
 * last, and the SSE event name always the payload type.
 */
function assemble(events: WireEvent[]) {
  for (const { event, data } of events) expect(data.type).toBe(event);
  expect(events[0]?.event).toBe('message_start');
  expect(field(events[0]?.data, 'message', 'content')).toEqual([]);

  const blocks: Record<string, unknown>[] = [];
  const fragments: string[][] = [];
  let open: number | undefined;
  let stop: WireEvent | undefined;
  let error: WireEvent | undefined;
  let ended = false;
  for (const wire of events.slice(1)) {
    const { event, data } = wire;
    expect(ended, `${event} after message_stop`).toBe(false);
    if (event === 'content_block_start') {
      expect(open, 'two blocks open at once').toBeUndefined();
      expect(data.index).toBe(blocks.length);
      open = blocks.length;
      const started = field(data, 'content_block');
      const block: Record<string, unknown> = typeof started === 'object' && started !== null ? { ...started } : {};
      if (block.type === 'tool_use') {
        expect(block.input).toEqual({});
        block.input = '';
      }
      blocks.push(block);
      fragments.push([]);
    } else if (event === 'content_block_delta') {
      expect(data.index).toBe(open);
      const block = blocks[open ?? -1];
      const delta = field(data, 'delta');
      const kind = text(delta, 'type');
      const allowed: Record<string, string[]> = {
        text: ['text_delta'],
        thinking: ['thinking_delta', 'signature_delta'],
        tool_use: ['input_json_delta'],
      };
      expect(allowed[text(block, 'type')]).toContain(kind);
      if (!block) continue;
      if (kind === 'text_delta') block.text += text(delta, 'text');
      if (kind === 'thinking_delta') block.thinking += text(delta, 'thinking');
      if (kind === 'signature_delta') block.signature += text(delta, 'signature');
      if (kind === 'input_json_delta') {
        block.input += text(delta, 'partial_json');
        fragments[open ?? -1]?.push(text(delta, 'partial_json'));
      }
    } else if (event === 'content_block_stop') {
      expect(data.index).toBe(open);
      open = undefined;
    } else if (event === 'message_delta') {
      expect(open).toBeUndefined();
      stop = wire;
    } else if (event === 'message_stop') {
      expect(stop).toBeDefined();
      ended = true;
    } else if (event === 'error') error = wire;
    else expect(event).toBe('ping');
  }
  return { blocks, fragments, open, stop, error, ended };
}

describe('POST /v1/messages', () => {
  it('answers a non-streamed request with a message object and records the request', async () => {
    const server = await start({
      script: [{ reasoning: 'Think.', content: 'Hello!', toolCalls: [{ name: 'get_time', arguments: { zone: 'UTC' } }] }],
    });
    const body = ask({ system: 'Be brief.' });
    const response = await post(server, '/messages', body, { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' });
    expect(response.status).toBe(200);
    const json = await response.json();
    expect(json).toEqual({
      id: 'msg_mock_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [
        { type: 'thinking', thinking: 'Think.', signature: expect.stringMatching(/^Eq[A-Za-z0-9]{94}$/) },
        { type: 'text', text: 'Hello!' },
        { type: 'tool_use', id: expect.stringMatching(/^toolu_[A-Za-z0-9]{24}$/), name: 'get_time', input: { zone: 'UTC' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: expect.any(Number) },
    });
    expect(json.usage.output_tokens).toBeGreaterThan(0);
    expect(server.requests).toEqual([
      { method: 'POST', path: '/v1/messages', headers: expect.objectContaining({ 'x-api-key': 'sk-ant-test' }), body },
    ]);
  });

  it('streams thinking with its signature, text and tool_use blocks in order, deltas that join to the script', async () => {
    const reasoning = 'The user wants the weather in two cities; both lookups are independent.';
    const content = 'Let me look that up for both cities at once. '.repeat(2);
    const usage = { prompt_tokens: 11, completion_tokens: 22, total_tokens: 33 };
    const toolCalls = [
      { id: 'toolu_a', name: 'get_weather', arguments: { city: 'Zürich' } },
      { name: 'get_weather', arguments: '{"city": "São Paulo"}' },
    ];
    const server = await start({ script: [{ reasoning, content, toolCalls, usage }] });
    const response = await post(server, '/messages', ask({ stream: true }));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await readEvents(response);
    const stream = assemble(events);
    expect(stream).toMatchObject({ ended: true, open: undefined, error: undefined });
    expect(stream.blocks).toEqual([
      { type: 'thinking', thinking: reasoning, signature: expect.stringMatching(/^Eq/) },
      { type: 'text', text: content },
      { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: '{"city":"Z\\u00fcrich"}' },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: '{"city": "São Paulo"}' },
    ]);
    // The API opens each tool input with an empty fragment.
    expect(stream.fragments[2]?.[0]).toBe('');
    expect(events.map((e) => e.event).filter((e, i, all) => e !== all[i - 1])).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const textDeltas = events.filter((e) => text(e.data, 'delta', 'type') === 'text_delta').map((e) => text(e.data, 'delta', 'text'));
    expect(textDeltas.length).toBeGreaterThan(content.length / 7);
    expect(Math.max(...textDeltas.map((d) => d.length))).toBeLessThanOrEqual(6);
    expect(field(events[0]?.data, 'message', 'usage')).toMatchObject({ input_tokens: 11, output_tokens: 1 });
    expect(stream.stop?.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 22 },
    });
  });

  it('cuts tool input anywhere, even inside a \\u escape, and replays a seed exactly', async () => {
    const turn: MockTurn = { toolCalls: [{ name: 'f', arguments: { city: 'Zürich', note: 'Grüße aus München' } }] };
    let cutInsideEscape = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const server = await start({ script: [turn], seed });
      const { blocks, fragments } = assemble(await readEvents(await post(server, '/messages', ask({ stream: true }))));
      const input = text(blocks[0], 'input');
      expect(input).toBe('{"city":"Z\\u00fcrich","note":"Gr\\u00fc\\u00dfe aus M\\u00fcnchen"}');
      expect(Math.max(...(fragments[0] ?? []).map((f) => f.length))).toBeLessThanOrEqual(8);
      let boundary = 0;
      for (const piece of fragments[0] ?? []) {
        boundary += piece.length;
        const escapeAt = input.lastIndexOf('\\u', boundary - 1);
        if (escapeAt >= 0 && boundary > escapeAt && boundary < escapeAt + 6) cutInsideEscape++;
      }
    }
    expect(cutInsideEscape).toBeGreaterThan(0);

    const deltas = async () => {
      const server = await start({ script: [{ content: 'Same every time, piece by piece.' }], seed: 7 });
      const events = await readEvents(await post(server, '/messages', ask({ stream: true })));
      return events.map((e) => field(e.data, 'delta', 'text'));
    };
    expect(await deltas()).toEqual(await deltas());
  });

  it('maps finish reasons: length to max_tokens, stop to end_turn, others as given', async () => {
    const server = await start({
      script: [{ content: 'Cut sho', finishReason: 'length' }, { content: 'Done.' }, { content: 'Wait.', finishReason: 'pause_turn' }],
    });
    const truncated = assemble(await readEvents(await post(server, '/messages', ask({ stream: true }))));
    expect(field(truncated.stop?.data, 'delta', 'stop_reason')).toBe('max_tokens');
    expect((await (await post(server, '/messages', ask())).json()).stop_reason).toBe('end_turn');
    expect((await (await post(server, '/messages', ask())).json()).stop_reason).toBe('pause_turn');
  });

  it('sends a ping even for an empty turn, and no empty text block', async () => {
    const server = await start({ script: [{}, {}] });
    const events = await readEvents(await post(server, '/messages', ask({ stream: true })));
    expect(events.map((e) => e.event)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    expect((await (await post(server, '/messages', ask())).json()).content).toEqual([]);
  });

  it('scripts an in-stream error as event: error after the deltas', async () => {
    const server = await start({
      script: [
        { content: 'partial answer', streamError: { message: 'Overloaded', type: 'overloaded_error' } },
        { content: 'another', streamError: { message: 'boom' } },
      ],
    });
    const events = await readEvents(await post(server, '/messages', ask({ stream: true })));
    const stream = assemble(events);
    expect(stream.blocks).toEqual([{ type: 'text', text: 'partial answer' }]);
    expect(stream).toMatchObject({ open: 0, stop: undefined, ended: false });
    expect(events.at(-1)).toEqual({ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    const fallback = await readEvents(await post(server, '/messages', ask({ stream: true })));
    expect(fallback.at(-1)?.data).toEqual({ type: 'error', error: { type: 'api_error', message: 'boom' } });
  });

  it('a scripted signature is the thinking block\'s, streamed and not', async () => {
    const server = await start({
      script: [
        { reasoning: 'Think.', signature: 'EqQBsig', content: 'Hi.' },
        { reasoning: 'Think.', signature: 'EqQBsig', content: 'Hi.' },
      ],
    });
    const events = await readEvents(await post(server, '/messages', ask({ stream: true })));
    expect(assemble(events).blocks[0]).toEqual({ type: 'thinking', thinking: 'Think.', signature: 'EqQBsig' });
    const json = await (await post(server, '/messages', ask())).json();
    expect(json.content[0]).toEqual({ type: 'thinking', thinking: 'Think.', signature: 'EqQBsig' });
  });

  it('cuts a stream off before message_stop, cleanly or by a reset', async () => {
    const server = await start({
      script: [
        { content: 'a long answer that will be cut', cutOff: { afterChunks: 4 } },
        { content: 'a long answer that will be reset', cutOff: { afterChunks: 4, reset: true } },
      ],
    });
    const events = await readEvents(await post(server, '/messages', ask({ stream: true })));
    expect(events).toHaveLength(4);
    expect(assemble(events)).toMatchObject({ ended: false, stop: undefined });
    await expect(readEvents(await post(server, '/messages', ask({ stream: true })))).rejects.toThrow();
  });

  it('a reset delivers the events before the cut, then breaks the connection', async () => {
    const server = await start({ script: [{ content: 'It is sunny.', cutOff: { afterChunks: -3, reset: true } }] });
    const received: WireEvent[] = [];
    const failure = await (async () => {
      for await (const { event, data } of parseSse(await post(server, '/messages', ask({ stream: true }))))
        received.push({ event, data: JSON.parse(data) });
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(received.at(-1)?.event).toBe('content_block_delta');
    expect(assemble(received)).toMatchObject({ blocks: [{ type: 'text', text: 'It is sunny.' }], open: 0, ended: false });
  });

  it('answers HTTP errors, bad bodies and exhausted scripts with Anthropic error bodies', async () => {
    const server = await start({
      script: [{ httpError: { status: 529 } }, { httpError: { status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } } } }],
    });
    const overloaded = await post(server, '/messages', ask({ stream: true }));
    expect([overloaded.status, await overloaded.json()]).toEqual([
      529,
      { type: 'error', error: { type: 'overloaded_error', message: 'Scripted HTTP 529' } },
    ]);
    const limited = await post(server, '/messages', ask());
    expect([limited.status, (await limited.json()).error.message]).toEqual([429, 'Slow down']);
    const noMaxTokens = await post(server, '/messages', { model: 'x', messages: [] });
    expect([noMaxTokens.status, await noMaxTokens.json()]).toEqual([
      400,
      { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') } },
    ]);
    const exhausted = await post(server, '/messages', ask());
    expect([exhausted.status, await exhausted.json()]).toEqual([
      500,
      { type: 'error', error: { type: 'api_error', message: 'The script has no turn for request 3' } },
    ]);
  });
});

describe('POST /v1/messages with the official Anthropic client', () => {
  const client = (server: MockModel) => new Anthropic({ baseURL: server.url, apiKey: 'sk-ant-test', maxRetries: 0 });

  it('streams thinking, text and parallel tool_use blocks that the client reassembles', async () => {
    const server = await start({
      script: [
        {
          reasoning: 'Two lookups.',
          content: 'Looking up.',
          toolCalls: [
            { id: 'toolu_1', name: 'get_weather', arguments: { city: 'Zürich' } },
            { id: 'toolu_2', name: 'get_weather', arguments: { city: 'Paris' } },
          ],
        },
      ],
    });
    const stream = client(server).messages.stream({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather?' }] });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    expect(deltas.join('')).toBe('Looking up.');
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.map((block) => (block.type === 'tool_use' ? [block.id, block.input] : [block.type]))).toEqual([
      ['thinking'],
      ['text'],
      ['toolu_1', { city: 'Zürich' }],
      ['toolu_2', { city: 'Paris' }],
    ]);
    const thinking = message.content[0];
    expect(thinking?.type === 'thinking' ? [thinking.thinking, thinking.signature.length] : []).toEqual(['Two lookups.', 96]);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const headers = server.requests[0]?.headers ?? {};
    expect(headers['anthropic-version']).toEqual(expect.any(String));
    // The key travels as x-api-key or, in newer clients, as a bearer token; either way it is recorded.
    expect([headers['x-api-key'], headers.authorization]).toContainEqual(expect.stringContaining('sk-ant-test'));
    expect(server.requests[0]?.body).toEqual({
      model: 'claude-test',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Weather?' }],
      stream: true,
    });
  });

  it('creates a non-streamed message, and surfaces in-stream and HTTP errors', async () => {
    const server = await start({
      script: [{ content: 'Hi.' }, { content: 'partial', streamError: { message: 'Overloaded', type: 'overloaded_error' } }, { httpError: { status: 401 } }],
    });
    const params = { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };
    const message = await client(server).messages.create(params);
    expect(message.content).toEqual([{ type: 'text', text: 'Hi.' }]);
    await expect(client(server).messages.stream(params).finalMessage()).rejects.toThrow(/Overloaded/);
    await expect(client(server).messages.create(params)).rejects.toMatchObject({
      status: 401,
      error: { type: 'error', error: { type: 'authentication_error', message: 'Scripted HTTP 401' } },
    });
  });
});
