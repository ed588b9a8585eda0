import type { MockTurn } from '@ai4ts/testing';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { field, mockModels, post, readEvents, text, type WireEvent } from './helpers.js';

const start = mockModels();

const ask = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-test', input: 'hi', ...extra });

const TERMINAL = ['response.completed', 'response.incomplete', 'response.failed'];

/**
 * Checks a Responses stream the way a strict client would, and joins its deltas: sequence numbers count from 0,
 * the SSE event name is the payload type, items open in output order one at a time, every delta belongs to the
 * open item, and nothing follows a terminal event.
 */
function assemble(events: WireEvent[]) {
  expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
  for (const { event, data } of events) expect(data.type).toBe(event);
  expect(events.slice(0, 2).map((e) => e.event)).toEqual(['response.created', 'response.in_progress']);
  expect(field(events[0]?.data, 'response', 'status')).toBe('in_progress');

  let reasoning = '';
  let content = '';
  const calls: { id: string; call_id: string; name: string; arguments: string; fragments: string[] }[] = [];
  const items: unknown[] = [];
  let open: { id: string; index: number } | undefined;
  let terminal: WireEvent | undefined;
  let error: WireEvent | undefined;
  for (const wire of events) {
    const { event, data } = wire;
    expect(terminal, `${event} after the terminal event`).toBeUndefined();
    if (event === 'response.output_item.added') {
      expect(open, 'two items open at once').toBeUndefined();
      expect(data.output_index).toBe(items.length);
      open = { id: text(data, 'item', 'id'), index: items.length };
      if (text(data, 'item', 'type') === 'function_call') {
        expect(field(data, 'item', 'status')).toBe('in_progress');
        calls.push({ id: open.id, call_id: text(data, 'item', 'call_id'), name: text(data, 'item', 'name'), arguments: '', fragments: [] });
      }
    } else if (event === 'response.output_item.done') {
      expect([data.output_index, text(data, 'item', 'id')]).toEqual([open?.index, open?.id]);
      items.push(data.item);
      open = undefined;
    } else if (event === 'error') error = wire;
    else if (TERMINAL.includes(event)) terminal = wire;
    else if (!event.startsWith('response.created') && !event.startsWith('response.in_progress')) {
      // Everything else happens inside the open item.
      expect([data.output_index, data.item_id], event).toEqual([open?.index, open?.id]);
      if (event === 'response.reasoning_summary_text.delta') reasoning += text(data, 'delta');
      if (event === 'response.output_text.delta') content += text(data, 'delta');
      if (event === 'response.output_text.done') expect(data.text).toBe(content);
      const call = calls.at(-1);
      if (event === 'response.function_call_arguments.delta' && call) {
        call.arguments += text(data, 'delta');
        call.fragments.push(text(data, 'delta'));
      }
      if (event === 'response.function_call_arguments.done') expect([data.name, data.arguments]).toEqual([call?.name, call?.arguments]);
    }
  }
  return { reasoning, content, calls, items, open, terminal, error };
}

describe('POST /v1/responses', () => {
  it('answers a non-streamed request with a response object and records the request', async () => {
    const server = await start({
      script: [{ reasoning: 'Think.', content: 'Hello!', toolCalls: [{ name: 'get_time', arguments: { zone: 'UTC' } }] }],
    });
    const tools = [{ type: 'function', name: 'get_time', parameters: {} }];
    const body = ask({ instructions: 'Be brief.', tools });
    const response = await post(server, '/responses', body, { authorization: 'Bearer sk-test' });
    expect(response.status).toBe(200);
    const json = await response.json();
    expect(json).toMatchObject({
      id: 'resp_mock_1',
      object: 'response',
      status: 'completed',
      model: 'gpt-test',
      instructions: 'Be brief.',
      incomplete_details: null,
      error: null,
      tools,
      output: [
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }] },
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [] }],
        },
        { type: 'function_call', status: 'completed', name: 'get_time', arguments: '{"zone":"UTC"}' },
      ],
    });
    const [reasoning, message, call] = json.output;
    expect(reasoning.id).toMatch(/^rs_/);
    expect(reasoning).not.toHaveProperty('encrypted_content');
    expect(message.id).toMatch(/^msg_/);
    expect([call.id, call.call_id]).toEqual([expect.stringMatching(/^fc_/), expect.stringMatching(/^call_[A-Za-z0-9]{24}$/)]);
    const usage = json.usage;
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    expect(usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(usage.input_tokens_details).toEqual({ cached_tokens: 0 });
    expect(server.requests).toEqual([
      { method: 'POST', path: '/v1/responses', headers: expect.objectContaining({ authorization: 'Bearer sk-test' }), body },
    ]);
  });

  it('streams every event with its sequence number, items in order, deltas that join to the script', async () => {
    const reasoning = 'The user wants the weather in two cities; both lookups are independent.';
    const content = 'Let me look that up for both cities at once. '.repeat(2);
    const usage = { prompt_tokens: 11, completion_tokens: 22, total_tokens: 33, prompt_tokens_details: { cached_tokens: 4 } };
    const toolCalls = [
      { id: 'call_a', name: 'get_weather', arguments: { city: 'Zürich' } },
      { name: 'get_weather', arguments: '{"city": "São Paulo"}' },
    ];
    const server = await start({ script: [{ reasoning, content, toolCalls, usage }] });
    const response = await post(server, '/responses', ask({ stream: true }));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await readEvents(response);
    const stream = assemble(events);
    expect(stream).toMatchObject({ reasoning, content, open: undefined, error: undefined });
    expect(stream.calls.map(({ call_id, name, arguments: args }) => ({ call_id, name, args }))).toEqual([
      { call_id: 'call_a', name: 'get_weather', args: '{"city":"Z\\u00fcrich"}' },
      { call_id: expect.stringMatching(/^call_/), name: 'get_weather', args: '{"city": "São Paulo"}' },
    ]);
    expect(events.map((e) => e.event).filter((e, i, all) => e !== all[i - 1])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const textDeltas = events.filter((e) => e.event === 'response.output_text.delta').map((e) => text(e.data, 'delta'));
    expect(textDeltas.length).toBeGreaterThan(content.length / 7);
    expect(Math.max(...textDeltas.map((d) => d.length))).toBeLessThanOrEqual(6);
    const completed = stream.terminal?.data.response;
    expect(completed).toMatchObject({ status: 'completed', incomplete_details: null, output: stream.items });
    expect(field(completed, 'usage')).toEqual({
      input_tokens: 11,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 22,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 33,
    });
  });

  it('cuts arguments anywhere, even inside a \\u escape, and replays a seed exactly', async () => {
    const turn: MockTurn = { toolCalls: [{ name: 'f', arguments: { city: 'Zürich', note: 'Grüße aus München' } }] };
    let cutInsideEscape = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const server = await start({ script: [turn], seed });
      const [call] = assemble(await readEvents(await post(server, '/responses', ask({ stream: true })))).calls;
      expect(call?.arguments).toBe('{"city":"Z\\u00fcrich","note":"Gr\\u00fc\\u00dfe aus M\\u00fcnchen"}');
      expect(Math.max(...(call?.fragments ?? []).map((f) => f.length))).toBeLessThanOrEqual(8);
      let boundary = 0;
      for (const piece of call?.fragments ?? []) {
        boundary += piece.length;
        const escapeAt = call?.arguments.lastIndexOf('\\u', boundary - 1) ?? -1;
        if (escapeAt >= 0 && boundary > escapeAt && boundary < escapeAt + 6) cutInsideEscape++;
      }
    }
    expect(cutInsideEscape).toBeGreaterThan(0);

    const deltas = async () => {
      const server = await start({ script: [{ content: 'Same every time, piece by piece.' }], seed: 7 });
      const events = await readEvents(await post(server, '/responses', ask({ stream: true })));
      return events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta);
    };
    expect(await deltas()).toEqual(await deltas());
  });

  it('gives reasoning items an encrypted_content when the request includes it', async () => {
    const server = await start({ script: [{ reasoning: 'Hmm.', content: 'Ok.' }, { reasoning: 'Hmm.', content: 'Ok.' }] });
    const include = ['reasoning.encrypted_content'];
    const json = await (await post(server, '/responses', ask({ include }))).json();
    expect(json.output[0].encrypted_content).toMatch(/^gAAAAA[A-Za-z0-9]{64}$/);
    const { items } = assemble(await readEvents(await post(server, '/responses', ask({ include, stream: true }))));
    expect(field(items[0], 'encrypted_content')).toMatch(/^gAAAAA/);
  });

  it('ends a truncated answer with response.incomplete (max_output_tokens)', async () => {
    const turn: MockTurn = { content: 'This answer runs out of tok', finishReason: 'length' };
    const server = await start({ script: [turn, turn] });
    const stream = assemble(await readEvents(await post(server, '/responses', ask({ stream: true, max_output_tokens: 7 }))));
    expect(stream.terminal?.event).toBe('response.incomplete');
    expect(stream.terminal?.data.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 7,
      output: [{ type: 'message', status: 'incomplete', content: [{ text: 'This answer runs out of tok' }] }],
    });
    const json = await (await post(server, '/responses', ask())).json();
    expect(json).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('scripts an in-stream error as an error event and response.failed after the deltas', async () => {
    const server = await start({
      script: [{ content: 'partial answer', toolCalls: [{ name: 'f', arguments: '{}' }], streamError: { message: 'model crashed', code: 'server_error' } }],
    });
    const events = await readEvents(await post(server, '/responses', ask({ stream: true })));
    const stream = assemble(events);
    expect(stream.content).toBe('partial answer');
    expect(stream.calls[0]?.arguments).toBe('{}');
    expect(stream.error?.data).toEqual({ type: 'error', code: 'server_error', message: 'model crashed', param: null, sequence_number: events.length - 2 });
    expect(stream.terminal?.event).toBe('response.failed');
    expect(stream.terminal?.data.response).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'model crashed' },
      output: [{ type: 'message', status: 'completed' }], // the call's arguments never finished
    });
    expect(stream.open?.id).toMatch(/^fc_/);
  });

  it('cuts a stream off before its terminal event, cleanly or by a reset', async () => {
    const server = await start({
      script: [
        { content: 'a long answer that will be cut', cutOff: { afterChunks: 5 } },
        { content: 'a long answer that will be reset', cutOff: { afterChunks: 5, reset: true } },
      ],
    });
    const events = await readEvents(await post(server, '/responses', ask({ stream: true })));
    expect(events).toHaveLength(5);
    expect(assemble(events).terminal).toBeUndefined();
    await expect(readEvents(await post(server, '/responses', ask({ stream: true })))).rejects.toThrow();
  });

  it('a negative afterChunks counts from the end: -3 cuts inside the last call, whatever the fragmenting', async () => {
    const toolCalls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_time', arguments: { tz: 'Europe/Paris' } },
    ];
    const server = await start({ script: [{ toolCalls, cutOff: { afterChunks: -3 } }] });
    const events = await readEvents(await post(server, '/responses', ask({ stream: true })));
    const stream = assemble(events);
    expect(stream.terminal).toBeUndefined();
    expect(events.at(-1)?.event).toBe('response.function_call_arguments.delta');
    expect(stream.items).toHaveLength(1);
    expect(stream.calls.map((call) => call.arguments)).toEqual(['{"city":"Paris"}', '{"tz":"Europe/Paris"}']);
  });

  it('answers scripted HTTP errors and bad bodies with OpenAI-style error bodies', async () => {
    const server = await start({ script: [{ httpError: { status: 429 } }, { httpError: { status: 503, body: { detail: 'overloaded' } } }] });
    const limited = await post(server, '/responses', ask({ stream: true }));
    expect([limited.status, await limited.json()]).toEqual([
      429,
      { error: { message: 'Scripted HTTP 429', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    ]);
    const unavailable = await post(server, '/responses', ask());
    expect([unavailable.status, await unavailable.json()]).toEqual([503, { detail: 'overloaded' }]);
    const bad = await post(server, '/responses', { model: 'x', messages: [] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('input');
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses', '/v1/responses']);
  });
});

describe('POST /v1/responses with the openai client', () => {
  it('streams reasoning, text and parallel function calls that the client reassembles', async () => {
    const server = await start({
      script: [
        {
          reasoning: 'Two lookups.',
          content: 'Looking up.',
          toolCalls: [
            { id: 'call_1', name: 'get_weather', arguments: { city: 'Zürich' } },
            { id: 'call_2', name: 'get_weather', arguments: { city: 'Paris' } },
          ],
        },
      ],
    });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-test', maxRetries: 0 });
    const stream = client.responses.stream({ model: 'mock-model', input: 'Weather?' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(deltas.join('')).toBe('Looking up.');
    expect(response.output_text).toBe('Looking up.');
    expect(response.output.filter((item) => item.type === 'function_call').map((item) => [item.call_id, item.arguments])).toEqual([
      ['call_1', '{"city":"Z\\u00fcrich"}'],
      ['call_2', '{"city":"Paris"}'],
    ]);
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    expect(server.requests[0]?.body).toEqual({ model: 'mock-model', input: 'Weather?', stream: true });
  });

  it('creates a non-streamed response and surfaces HTTP errors', async () => {
    const server = await start({ script: [{ content: 'Hi.' }, { httpError: { status: 400 } }] });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-test', maxRetries: 0 });
    const response = await client.responses.create({ model: 'mock-model', input: 'Hi' });
    expect([response.status, response.output_text]).toEqual(['completed', 'Hi.']);
    await expect(client.responses.create({ model: 'mock-model', input: 'Hi' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Scripted HTTP 400'),
    });
  });
});
