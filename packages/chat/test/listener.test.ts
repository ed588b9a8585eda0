import { ApiError, ConnectionError, ProtocolError, StreamIncompleteError } from '@ai4ts/core';
import { type ChatCompletion, ChatStreamListener } from '@ai4ts/chat';
import { describe, expect, it } from 'vitest';
import { chunk, finish, ofType, run, toolChunk } from './helpers.js';

const fn = (name: string | undefined, args: string | undefined) => ({
  ...(name === undefined ? {} : { name }),
  ...(args === undefined ? {} : { arguments: args }),
});

describe('ChatStreamListener: text', () => {
  it('OpenAI: merges content deltas, role first, usage chunk with choices [] after the finish', () => {
    const { listener, events } = run([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      finish('stop'),
      { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'test-model', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } },
    ]);
    expect(listener.status).toBe('completed');
    expect(listener.content).toBe('Hello');
    expect(listener.completion).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    });
    expect(ofType(events, 'content').map((e) => [e.delta, e.snapshot])).toEqual([
      ['Hel', 'Hel'],
      ['lo', 'Hello'],
    ]);
    expect(events.map((e) => e.type)).toEqual(['content', 'content', 'finish', 'usage']);
  });

  it('a delta without role (some vLLM and llama.cpp builds) is still the assistant', () => {
    const { listener } = run([chunk({ content: 'Hi' }), finish('stop')]);
    expect(listener.completion.choices[0]?.message).toEqual({ role: 'assistant', content: 'Hi' });
  });

  it('content is null when no text arrived; status is streaming until the finish', () => {
    const { listener } = run([chunk({ role: 'assistant', content: null })], { end: false });
    expect(listener.status).toBe('streaming');
    expect(listener.completion.choices[0]?.message.content).toBeNull();
    expect(listener.completion.choices[0]?.message).not.toHaveProperty('reasoning_content');
    expect(() => listener.end()).toThrow(StreamIncompleteError);
    expect(listener.status).toBe('failed');
    expect(listener.completion.choices[0]?.finish_reason).toBeNull();
  });

  it('the partial completion has a choice 0 even before any chunk', () => {
    const listener = new ChatStreamListener();
    expect(listener.status).toBe('pending');
    expect(() => listener.end()).toThrow(StreamIncompleteError);
    expect(listener.completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: null }, finish_reason: null },
    ]);
    expect(listener.status).toBe('failed');
  });

  it('Azure OpenAI: a first chunk with choices [] (prompt_filter_results) is skipped', () => {
    const { listener } = run([
      { id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] },
      chunk({ role: 'assistant', content: 'ok' }),
      finish('stop'),
    ]);
    expect(listener.completion.id).toBe('chatcmpl-1');
    expect(listener.completion.model).toBe('test-model');
    expect(listener.content).toBe('ok');
  });

  it('OpenAI: refusal deltas become message.refusal and refusal events', () => {
    const { listener, events } = run([chunk({ role: 'assistant', refusal: "I can't " }), chunk({ refusal: 'help.' }), finish('stop')]);
    expect(listener.completion.choices[0]?.message).toEqual({ role: 'assistant', content: null, refusal: "I can't help." });
    expect(ofType(events, 'refusal').map((e) => e.snapshot)).toEqual(["I can't ", "I can't help."]);
  });

  it('OpenAI: logprobs are appended chunk by chunk', () => {
    const { listener } = run([
      chunk({ content: 'a' }, { logprobs: { content: [{ token: 'a', logprob: -0.1 }], refusal: null } }),
      chunk({ content: 'b' }, { logprobs: { content: [{ token: 'b', logprob: -0.2 }], refusal: null } }),
      finish('stop'),
    ]);
    expect(listener.completion.choices[0]?.logprobs).toEqual({
      content: [
        { token: 'a', logprob: -0.1 },
        { token: 'b', logprob: -0.2 },
      ],
      refusal: null,
    });
  });

  it('OpenAI n=2: interleaved choices are merged separately, complete when both finished', () => {
    const { listener, events } = run(
      [
        chunk({ role: 'assistant', content: 'A1' }, { index: 0 }),
        chunk({ role: 'assistant', content: 'B1' }, { index: 1 }),
        chunk({ content: 'A2' }, { index: 0 }),
        finish('stop', 0),
        chunk({ content: 'B2' }, { index: 1 }),
      ],
      { end: false },
    );
    expect(listener.status).toBe('streaming');
    listener.push(finish('length', 1));
    expect(listener.end().choices).toHaveLength(2);
    expect(listener.status).toBe('completed');
    expect(listener.choice(1)?.content).toBe('B1B2');
    expect(listener.completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'A1A2', 'stop'],
      [1, 'B1B2', 'length'],
    ]);
    expect(ofType(events, 'content').map((e) => `${e.choice}:${e.delta}`)).toEqual(['0:A1', '1:B1', '0:A2', '1:B2']);
  });

  it('a malformed huge choice index is just another choice', () => {
    const { listener } = run([chunk({ content: 'x' }, { index: 4294967294 }), finish('stop', 4294967294)]);
    expect(listener.completion.choices.map((c) => [c.index, c.message.content])).toEqual([[4294967294, 'x']]);
    expect(listener.status).toBe('completed');
  });

  it('a repeated finish_reason (on the usage chunk) does not finish twice', () => {
    const { events } = run([chunk({ content: 'x' }), finish('stop'), finish('stop', 0, { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })]);
    expect(ofType(events, 'finish')).toHaveLength(1);
    expect(ofType(events, 'usage')).toHaveLength(1);
  });
});

describe('ChatStreamListener: usage', () => {
  const usage = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };

  it('DeepSeek: usage inside the finish chunk', () => {
    const { listener, events } = run([chunk({ content: 'x' }), { ...finish('stop'), usage }]);
    expect(listener.usage).toEqual(usage);
    expect(ofType(events, 'usage')[0]).toEqual({ type: 'usage', usage, raw: usage });
  });

  it('Moonshot/Kimi: usage in choices[0].usage of the finish chunk', () => {
    const { listener } = run([chunk({ content: 'x' }), finish('stop', 0, { usage })]);
    expect(listener.completion.usage).toEqual(usage);
  });

  it('vLLM: a usage chunk without any choices key', () => {
    const { listener } = run([chunk({ content: 'x' }), finish('stop'), { id: 'chatcmpl-1', usage }]);
    expect(listener.usage).toEqual(usage);
  });

  it('usage sent on every chunk (Zhipu GLM style) emits only when it changes; total is derived when absent', () => {
    const { listener, events } = run([
      chunk({ content: 'a' }, { usage: { prompt_tokens: 4, completion_tokens: 1 } }),
      chunk({ content: 'b' }, { usage: { prompt_tokens: 4, completion_tokens: 1 } }),
      { ...finish('stop'), usage: { prompt_tokens: 4, completion_tokens: 2 } },
    ]);
    expect(ofType(events, 'usage').map((e) => e.usage.total_tokens)).toEqual([5, 6]);
    expect(listener.usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
  });
});

describe('ChatStreamListener: reasoning', () => {
  it('DeepSeek: reasoning_content with content null alongside', () => {
    const { listener, events } = run([
      chunk({ role: 'assistant', content: null, reasoning_content: 'Let me ' }),
      chunk({ content: null, reasoning_content: 'think.' }),
      chunk({ content: 'Answer', reasoning_content: null }),
      finish('stop'),
    ]);
    expect(listener.reasoning).toBe('Let me think.');
    expect(listener.completion.choices[0]?.message).toEqual({ role: 'assistant', content: 'Answer', reasoning_content: 'Let me think.' });
    expect(ofType(events, 'reasoning').map((e) => e.delta)).toEqual(['Let me ', 'think.']);
  });

  it('Qwen/DashScope: reasoning_content "" on content chunks adds nothing', () => {
    const { listener } = run([
      chunk({ content: '', reasoning_content: 'hmm' }),
      chunk({ content: 'Yes', reasoning_content: '' }),
      finish('stop'),
    ]);
    expect(listener.completion.choices[0]?.message).toEqual({ role: 'assistant', content: 'Yes', reasoning_content: 'hmm' });
  });

  it('OpenRouter and vLLM: `reasoning` field', () => {
    const { listener } = run([chunk({ role: 'assistant', content: '', reasoning: 'step 1' }), chunk({ content: 'done' }), finish('stop')]);
    expect(listener.reasoning).toBe('step 1');
    expect(listener.content).toBe('done');
  });

  it('Ollama: <think> tags inside content, split across deltas, go to reasoning', () => {
    const deltas = ['<th', 'ink>\nI should', ' greet.</thi', 'nk>\n\nHello', ' <b>world</b>'];
    const { listener, events } = run([...deltas.map((content) => chunk({ content })), finish('stop')]);
    expect(listener.reasoning).toBe('I should greet.');
    expect(listener.content).toBe('Hello <b>world</b>');
    expect(ofType(events, 'content').at(-1)?.snapshot).toBe('Hello <b>world</b>');
  });

  it('vLLM: a "<" that is not a tag is released at the finish', () => {
    const { listener } = run([chunk({ content: 'a <' }), finish('stop')]);
    expect(listener.content).toBe('a <');
  });

  it('thinkTags: false keeps the tags in the content', () => {
    const { listener } = run([chunk({ content: '<think>x</think>y' }), finish('stop')], { thinkTags: false });
    expect(listener.content).toBe('<think>x</think>y');
    expect(listener.completion.choices[0]?.message).not.toHaveProperty('reasoning_content');
  });

  it('Mistral: content as an array of text and thinking parts', () => {
    const { listener } = run([
      chunk({ role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Consider ' }] }] }),
      chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'it.' }] }] }),
      chunk({ content: [{ type: 'text', text: 'Result' }] }),
      chunk({ content: '!' }),
      finish('stop'),
    ]);
    expect(listener.reasoning).toBe('Consider it.');
    expect(listener.content).toBe('Result!');
  });
});

describe('ChatStreamListener: tool calls', () => {
  it('OpenAI: sequential parallel calls by index; done when the next call starts and at the finish', () => {
    const { listener, events } = run([
      chunk({ role: 'assistant', content: null }),
      toolChunk({ index: 0, id: 'call_a', type: 'function', function: fn('get_weather', '') }),
      toolChunk({ index: 0, function: fn(undefined, '{"city":') }),
      toolChunk({ index: 0, function: fn(undefined, '"Paris"}') }),
      toolChunk({ index: 1, id: 'call_b', type: 'function', function: fn('get_time', '') }),
      toolChunk({ index: 1, function: fn(undefined, '{"tz":"CET"}') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
    ]);
    expect(listener.finishReason).toBe('tool_calls');
    expect(events.filter((e) => e.type.startsWith('tool_call') || e.type === 'finish').map((e) => `${e.type}:${'index' in e ? e.index : ''}`)).toEqual([
      'tool_call.start:0',
      'tool_call.delta:0',
      'tool_call.delta:0',
      'tool_call.done:0',
      'tool_call.start:1',
      'tool_call.delta:1',
      'tool_call.done:1',
      'finish:',
    ]);
    expect(ofType(events, 'tool_call.done')[0]).toEqual({
      type: 'tool_call.done',
      index: 0,
      id: 'call_a',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      choice: 0,
    });
  });

  it('Qwen/DashScope: parallel calls with interleaved fragments stay open until the finish', () => {
    const { listener, events } = run([
      toolChunk({ index: 0, id: 'c1', function: fn('a', '{"x"') }),
      toolChunk({ index: 1, id: 'c2', function: fn('b', '{"y"') }),
      toolChunk({ index: 0, function: fn(undefined, ':1}') }),
      toolChunk({ index: 1, function: fn(undefined, ':2}') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls.map((c) => c.function.arguments)).toEqual(['{"x":1}', '{"y":2}']);
    expect(ofType(events, 'tool_call.done').map((e) => e.arguments)).toEqual(['{"x":1}', '{"y":2}']);
  });

  it('Gemini OpenAI-compatible: fragments without index, matched by id, then by position', () => {
    const { listener } = run([
      toolChunk({ id: 'g1', type: 'function', function: fn('first', '{"a":') }),
      toolChunk({ function: fn(undefined, '1}') }),
      toolChunk({ id: 'g2', type: 'function', function: fn('second', '{"b":') }),
      toolChunk({ id: 'g1', function: fn(undefined, '') }),
      toolChunk({ function: fn(undefined, '2}') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['g1', 'first', '{"a":1}'],
      ['g2', 'second', '{"b":2}'],
    ]);
  });

  it('Qwen (older DashScope): every call at index 0 with a new id is a new call', () => {
    const { listener } = run([
      toolChunk({ index: 0, id: 'call_1', function: fn('a', '{"n":1}') }),
      toolChunk({ index: 0, id: 'call_2', function: fn('b', '{"n":') }),
      toolChunk({ index: 0, id: '', function: fn(undefined, '2}') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['call_1', 'a', '{"n":1}'],
      ['call_2', 'b', '{"n":2}'],
    ]);
  });

  it('Hunyuan: index starting at 1 and sparse indexes; positions count from 0', () => {
    const { listener, events } = run([
      toolChunk({ index: 1, id: 'h1', function: fn('a', '{}') }),
      toolChunk({ index: 3, id: 'h3', function: fn('b', '{}') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls.map((c) => c.id)).toEqual(['h1', 'h3']);
    expect(ofType(events, 'tool_call.start').map((e) => e.index)).toEqual([0, 1]);
  });

  it('vLLM: id and name repeated on every fragment are not concatenated', () => {
    const { listener } = run([
      toolChunk({ index: 0, id: 'v1', type: 'function', function: fn('get_weather', '{"ci') }),
      toolChunk({ index: 0, id: 'v1', type: 'function', function: fn('get_weather', 'ty":"Oslo"}') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls).toEqual([
      { id: 'v1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ]);
  });

  it('MiniMax: "" and "null" ids on continuations continue the call (with and without index)', () => {
    const { listener } = run([
      toolChunk({ index: 0, id: 'm1', function: fn('a', '{"k":') }),
      toolChunk({ index: 0, id: '', function: fn(null as unknown as string, '"v"') }),
      toolChunk({ id: 'null', function: fn(undefined, '}') }),
      toolChunk({ id: null, function: fn(undefined, '') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls).toEqual([{ id: 'm1', type: 'function', function: { name: 'a', arguments: '{"k":"v"}' } }]);
  });

  it('Zhipu GLM: the name arrives after the first fragment; start waits for it', () => {
    const { listener, events } = run([
      toolChunk({ index: 0, id: 'z1', function: fn(undefined, '{"q":') }),
      toolChunk({ index: 0, function: fn('search', '"ts"}') }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls[0]?.function).toEqual({ name: 'search', arguments: '{"q":"ts"}' });
    expect(ofType(events, 'tool_call.start')).toEqual([{ type: 'tool_call.start', index: 0, id: 'z1', name: 'search', choice: 0 }]);
    expect(ofType(events, 'tool_call.delta').map((e) => e.delta)).toEqual(['{"q":"ts"}']);
  });

  it('Ollama: a whole call in one chunk, and finish_reason stop reported as tool_calls', () => {
    const { listener, events } = run([
      chunk({ role: 'assistant', content: '', tool_calls: [{ id: 'call_x', index: 0, type: 'function', function: { name: 'now', arguments: '{"tz":"UTC"}' } }] }),
      finish('stop'),
    ]);
    expect(listener.finishReason).toBe('tool_calls');
    expect(ofType(events, 'finish')[0]?.finishReason).toBe('tool_calls');
    expect(listener.completion.choices[0]?.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'now', arguments: '{"tz":"UTC"}' } }],
    });
  });

  it('OpenAI: a no-argument call ("" arguments) ends as "{}"; an id-less call gets a stable id', () => {
    const { listener, events } = run([
      toolChunk({ index: 0, id: 'call_1', function: fn('ping', '') }),
      toolChunk({ index: 1, function: fn('pong', undefined) }),
      finish('tool_calls'),
    ]);
    expect(listener.toolCalls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'ping', arguments: '{}' } },
      { id: 'ai4ts_call_1', type: 'function', function: { name: 'pong', arguments: '{}' } },
    ]);
    expect(ofType(events, 'tool_call.done').map((e) => [e.id, e.arguments])).toEqual([
      ['call_1', '{}'],
      ['ai4ts_call_1', '{}'],
    ]);
  });

  it('arguments split inside a \\uXXXX escape and inside a surrogate pair concatenate exactly', () => {
    const { listener } = run([
      toolChunk({ index: 0, id: 'u', function: fn('say', '{"t":"caf\\u00') }),
      toolChunk({ index: 0, function: fn(undefined, 'e9 \ud83d') }),
      toolChunk({ index: 0, function: fn(undefined, '\ude00"}') }),
      finish('tool_calls'),
    ]);
    expect(JSON.parse(listener.toolCalls[0]?.function.arguments ?? '')).toEqual({ t: 'café 😀' });
  });

  it('finish_reason length during a call stays length; the call keeps its partial arguments and is never done', () => {
    const { listener, events } = run([toolChunk({ index: 0, id: 'l1', function: fn('write', '{"text":"long') }), finish('length')]);
    expect(listener.finishReason).toBe('length');
    expect(listener.toolCalls[0]?.function.arguments).toBe('{"text":"long');
    expect(ofType(events, 'tool_call.done')).toEqual([]);
  });

  it('a stream cut during a call: failed with StreamIncompleteError, no tool_call.done', () => {
    const { listener, events, error } = run([toolChunk({ index: 0, id: 'c', function: fn('f', '{"a":') })]);
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(listener.status).toBe('failed');
    expect(ofType(events, 'tool_call.done')).toEqual([]);
  });

  it('one call whose arguments arrive in 100,000 fragments', () => {
    const listener = new ChatStreamListener();
    let deltas = 0;
    listener.on('tool_call.delta', () => deltas++);
    listener.push(toolChunk({ index: 0, id: 'big', function: fn('f', '{"s":"') }));
    for (let i = 0; i < 100_000; i++) listener.push(toolChunk({ index: 0, function: fn(undefined, 'x') }));
    listener.push(toolChunk({ index: 0, function: fn(undefined, '"}') }));
    listener.push(finish('tool_calls'));
    listener.pushSse(event('[DONE]'));
    listener.end();
    expect(deltas).toBe(100_002);
    expect((JSON.parse(listener.toolCalls[0]?.function.arguments ?? '') as { s: string }).s).toHaveLength(100_000);
  });
});

describe('ChatStreamListener: errors', () => {
  it('OpenRouter: an error object in a chunk throws ApiError with the partial completion and emits error', () => {
    const listener = new ChatStreamListener();
    const errors: unknown[] = [];
    listener.on('error', (e) => errors.push(e.error));
    listener.push(chunk({ content: 'partial ' }));
    let thrown: unknown;
    try {
      listener.push({ error: { message: 'Provider overloaded', code: 502, type: 'server_error' } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const error = thrown as ApiError;
    expect(error.code).toBe('502');
    expect(error.message).toContain('Provider overloaded');
    expect((error.partial as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('partial ');
    expect(errors).toEqual([error]);
    expect(listener.status).toBe('failed');
  });

  it('a chunk that is not an object is a ProtocolError', () => {
    expect(() => new ChatStreamListener().push([1, 2])).toThrow(ProtocolError);
  });
});

/** One SSE event as the decoder gives it. */
const event = (data: string, name = 'message') => ({ event: name, data });

describe('ChatStreamListener: the listener contract', () => {
  it('status: pending, streaming, then completed at [DONE] (the usage after the finish still merged)', () => {
    const listener = new ChatStreamListener();
    expect(listener.status).toBe('pending');
    listener.pushSse(event(JSON.stringify(chunk({ content: 'Hi' }))));
    expect(listener.status).toBe('streaming');
    listener.pushSse(event(JSON.stringify(finish('stop'))));
    expect(listener.status).toBe('streaming');
    listener.pushSse(event(JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })));
    listener.pushSse(event('[DONE]'));
    expect(listener.status).toBe('completed');
    expect(listener.end().usage?.total_tokens).toBe(2);
    expect(listener.error).toBeUndefined();
  });

  it('a provider truncation (length, content_filter) is a completed stream with that finish reason', () => {
    for (const reason of ['length', 'content_filter']) {
      const { listener, result } = run([chunk({ content: 'cut sh' }), finish(reason)]);
      expect(listener.status).toBe('completed');
      expect(result?.choices[0]?.finish_reason).toBe(reason);
    }
  });

  it('after completed, input is ignored: no throw, no change', () => {
    const listener = new ChatStreamListener();
    listener.push(chunk({ content: 'done' }));
    listener.push(finish('stop'));
    listener.pushSse(event('[DONE]'));
    listener.push(chunk({ content: ' more' }));
    listener.push({ error: { message: 'late' } });
    listener.pushSse(event('not json'));
    expect(listener.status).toBe('completed');
    expect(listener.end().choices[0]?.message.content).toBe('done');
  });

  it('[DONE] before the finish_reason records and throws StreamIncompleteError', () => {
    const listener = new ChatStreamListener();
    const errors: unknown[] = [];
    listener.on('error', (e) => errors.push(e.error));
    listener.pushSse(event(JSON.stringify(chunk({ content: 'half' }))));
    expect(() => listener.pushSse(event('[DONE]'))).toThrow(StreamIncompleteError);
    expect(listener.status).toBe('failed');
    expect(errors).toEqual([listener.error]);
    expect(listener.error?.partial).toMatchObject({ choices: [{ message: { content: 'half' }, finish_reason: null }] });
  });

  it('pushSse: event: error is an ApiError, data that is not JSON a ProtocolError with the line; empty data is skipped', () => {
    const flat = new ChatStreamListener();
    flat.pushSse(event(''));
    expect(flat.status).toBe('pending');
    expect(() => flat.pushSse(event('{"code":"overloaded","message":"busy"}', 'error'))).toThrow(ApiError);
    expect(flat.error).toMatchObject({ code: 'overloaded', message: 'busy' });

    const bad = new ChatStreamListener();
    bad.pushSse(event(JSON.stringify(chunk({ content: 'ok' }))));
    let thrown: unknown;
    try {
      bad.pushSse(event('{"choices": ['));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect(thrown).toBe(bad.error);
    expect((thrown as ProtocolError).line).toBe('{"choices": [');
  });

  it('after failed, input is ignored and end() throws the recorded error', () => {
    const listener = new ChatStreamListener();
    expect(() => listener.push('nope')).toThrow(ProtocolError);
    const recorded = listener.error;
    listener.push(chunk({ content: 'ignored' }));
    listener.push(finish('stop'));
    listener.pushSse(event('[DONE]'));
    expect(listener.status).toBe('failed');
    expect(() => listener.end()).toThrow(recorded);
    expect(listener.content).toBe('');
  });

  it('end() returns the completion, and the same again when called twice', () => {
    const { listener, result } = run([chunk({ content: 'x' }), finish('stop')]);
    expect(result).toEqual(listener.completion);
    expect(listener.end()).toEqual(result);
  });

  it('fail(): any thrown value becomes an Ai4tsError with the partial, emitted once; the first error wins', () => {
    const listener = new ChatStreamListener();
    const errors: unknown[] = [];
    listener.on('error', (e) => errors.push(e.error));
    listener.push(chunk({ content: 'so far <' }));
    const first = listener.fail(new TypeError('socket hang up'));
    expect(first).toBeInstanceOf(ConnectionError);
    expect(first.message).toContain('socket hang up');
    // Text held back as a possible <think> tag is in the partial.
    expect((first.partial as ChatCompletion).choices[0]?.message.content).toBe('so far <');
    expect(listener.fail(new Error('second'))).toBe(first);
    expect(errors).toEqual([first]);
    expect(listener.status).toBe('failed');
  });

  it('fail(): an Ai4tsError keeps a partial it already has', () => {
    const own = new ApiError('boom', { partial: { mine: true } });
    expect(new ChatStreamListener().fail(own).partial).toEqual({ mine: true });
  });
});

describe('ChatStreamListener: provider fields kept for the round trip', () => {
  it('Gemini: extra_content on a tool-call fragment is kept on that call', () => {
    const signature = { google: { thought_signature: 'CiQBVKhc7g==' } };
    const { result } = run([
      toolChunk({ id: 'fc_1', type: 'function', extra_content: signature, function: fn('get_weather', '{"city":"Paris"}') }),
      toolChunk({ id: 'fc_2', type: 'function', function: fn('get_time', '{}') }),
      finish('tool_calls'),
    ]);
    expect(result?.choices[0]?.message.tool_calls).toEqual([
      { id: 'fc_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: signature },
      { id: 'fc_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
  });

  it('OpenRouter: reasoning_details arrays are concatenated over the deltas, objects merged, null ignored', () => {
    const a = { type: 'reasoning.text', text: 'Let me', index: 0 };
    const b = { type: 'reasoning.text', text: ' think', index: 0 };
    const listener = new ChatStreamListener();
    listener.push(chunk({ role: 'assistant', reasoning: 'Let me', reasoning_details: [a], meta: { one: 1 } }));
    const before = listener.completion;
    listener.push(chunk({ reasoning: ' think', reasoning_details: [b], meta: { two: 2 }, annotations: null }));
    listener.push(finish('stop'));
    listener.pushSse(event('[DONE]'));
    const message = listener.end().choices[0]?.message;
    expect(message).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'Let me think',
      reasoning_details: [a, b],
      meta: { one: 1, two: 2 },
    });
    // A snapshot taken earlier never changes as more deltas arrive.
    expect(before.choices[0]?.message.reasoning_details).toEqual([a]);
    expect(before.choices[0]?.message.meta).toEqual({ one: 1 });
  });
});
