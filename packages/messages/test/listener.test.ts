import { ApiError, ProtocolError, StreamIncompleteError } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';
import { isTextBlock, MessagesStreamListener } from '../src/index.js';
import {
  blockStart,
  blockStop,
  delta,
  helloStream,
  messageDelta,
  messageStart,
  messageStop,
  overloaded,
  ping,
  textBlock,
  thinkingBlock,
  thinkingTextToolStream,
  toolUseBlock,
} from './fixtures.js';

type Event = { type: string; [key: string]: unknown };

/** Feeds the events as the wire carries them: each one's JSON as the data of an SSE event named after it. */
function run(events: Event[], listener = new MessagesStreamListener()): MessagesStreamListener {
  for (const event of events) listener.pushSse({ event: event.type, data: JSON.stringify(event) });
  return listener;
}

/** Pushes the events and returns what was thrown. */
function failing(events: Event[], listener = new MessagesStreamListener()): unknown {
  try {
    run(events, listener);
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('MessagesStreamListener: a plain answer', () => {
  it('builds the message, text and status, ignoring ping', () => {
    const listener = run(helloStream());
    expect(listener.status).toBe('completed');
    expect(listener.text).toBe('Hello!');
    expect(listener.stopReason).toBe('end_turn');
    expect(listener.end()).toEqual({
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 472,
        output_tokens: 15,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        service_tier: 'standard',
      },
    });
    expect(listener.events.map((e) => e.type)).toEqual(helloStream().map((e) => e.type));
  });

  it('emits content with growing snapshots, usage, finish, the raw events and the message', () => {
    const listener = new MessagesStreamListener();
    const seen: unknown[] = [];
    listener.on('content', (e) => seen.push(e));
    listener.on('finish', (e) => seen.push(e));
    listener.on('usage', (e) => seen.push(e.usage));
    const raw: string[] = [];
    listener.on('event', (e) => raw.push(e.type));
    let final: unknown;
    listener.on('message', (m) => (final = m));
    run(helloStream(), listener);
    expect(seen).toEqual([
      {
        prompt_tokens: 472,
        completion_tokens: 2,
        total_tokens: 474,
        prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 },
      },
      { type: 'content', delta: 'Hello', snapshot: 'Hello', choice: 0 },
      { type: 'content', delta: '!', snapshot: 'Hello!', choice: 0 },
      {
        prompt_tokens: 472,
        completion_tokens: 15,
        total_tokens: 487,
        prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 },
      },
      { type: 'finish', finishReason: 'stop', choice: 0 },
    ]);
    expect(raw).toEqual(helloStream().map((e) => e.type));
    expect(final).toBe(listener.message);
  });
  it('gives a handler added mid-stream the whole text so far as its snapshot (none kept while nobody listened)', () => {
    const listener = new MessagesStreamListener();
    const seen: Array<{ delta: string; snapshot: string }> = [];
    const reasoning: string[] = [];
    // message_start's own block is no delta: the snapshots, like the events, leave it out.
    const start = { type: 'message_start', message: { id: 'msg_1', model: 'm', content: [{ type: 'text', text: 'kept ' }] } };
    run([start, ...thinkingBlock(1, 'sig', 'Think', 'ing.'), blockStart(2, { type: 'text', text: 'Hi' })], listener);
    run([delta(2, { type: 'text_delta', text: ' there' })], listener);
    listener.on('content', ({ delta, snapshot }) => seen.push({ delta, snapshot }));
    listener.on('reasoning', ({ snapshot }) => reasoning.push(snapshot));
    run([delta(2, { type: 'text_delta', text: '!' }), blockStop(2), ...textBlock(3, ' More.')], listener);
    run([...thinkingBlock(4, 'sig', ' Again.'), messageDelta('end_turn'), messageStop], listener);
    expect(seen).toEqual([
      { delta: '!', snapshot: 'Hi there!' },
      { delta: ' More.', snapshot: 'Hi there! More.' },
    ]);
    expect(reasoning).toEqual(['Thinking. Again.']);
    expect(listener.text).toBe('kept Hi there! More.');
  });
});

describe('MessagesStreamListener: thinking, text and tools', () => {
  it('keeps thinking with its signature, replaces the empty start signature, parses input split inside an escape', () => {
    const listener = run(thinkingTextToolStream());
    const [thinking, text, tool] = listener.end().content;
    expect(thinking).toEqual({
      type: 'thinking',
      thinking: 'The user wants the weather.',
      signature: 'EqQBCkgIARABGAIiQL2',
    });
    expect(text).toEqual({ type: 'text', text: 'Let me check that.' });
    expect(tool).toEqual({
      type: 'tool_use',
      id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      name: 'get_weather',
      input: { location: 'San Francisco, CA "the city"', unit: 'fahrenheit' },
    });
    expect(listener.thinking).toBe('The user wants the weather.');
    expect(listener.toolUses).toEqual([tool]);
    expect(listener.stopReason).toBe('tool_use');
  });

  it('emits reasoning and tool_call events; done carries the argument string as streamed', () => {
    const listener = new MessagesStreamListener();
    const seen: unknown[] = [];
    for (const name of ['reasoning', 'tool_call.start', 'tool_call.delta', 'tool_call.done', 'finish'] as const)
      listener.on(name, (e) => seen.push(e));
    run(thinkingTextToolStream(), listener);
    const id = 'toolu_01T1x1fJ34qAmk2tNTrN7Up6';
    const args = '{"location": "San Francisco, CA \\"the city\\"", "unit": "fahrenheit"}';
    expect(seen).toEqual([
      { type: 'reasoning', delta: 'The user wants ', snapshot: 'The user wants ', choice: 0 },
      { type: 'reasoning', delta: 'the weather.', snapshot: 'The user wants the weather.', choice: 0 },
      { type: 'tool_call.start', index: 0, id, name: 'get_weather', choice: 0 },
      { type: 'tool_call.delta', index: 0, id, delta: '{"location": "San Fr', choice: 0 },
      { type: 'tool_call.delta', index: 0, id, delta: 'ancisco, CA \\', choice: 0 },
      { type: 'tool_call.delta', index: 0, id, delta: '"the city\\"", "unit": "fahrenheit"}', choice: 0 },
      { type: 'tool_call.done', index: 0, id, name: 'get_weather', arguments: args, choice: 0 },
      { type: 'finish', finishReason: 'tool_calls', choice: 0 },
    ]);
    expect(JSON.parse(args)).toEqual(listener.toolUses[0]?.input);
  });

  it('handles parallel tool uses and a no-input tool ({})', () => {
    const listener = new MessagesStreamListener();
    const done: Array<{ index: number; arguments: string }> = [];
    listener.on('tool_call.done', (e) => done.push({ index: e.index, arguments: e.arguments }));
    run(
      [
        messageStart(),
        ...textBlock(0, "I'll check both."),
        ...toolUseBlock(1, 'toolu_a', 'get_weather', '{"city":', ' "Paris"}'),
        ...toolUseBlock(2, 'toolu_b', 'get_time', '{"tz": "Europe/Paris"}'),
        ...toolUseBlock(3, 'toolu_c', 'get_location'),
        messageDelta('tool_use'),
        messageStop,
      ],
      listener,
    );
    expect(listener.toolUses.map((t) => [t.id, t.name, t.input, t.input_error])).toEqual([
      ['toolu_a', 'get_weather', { city: 'Paris' }, undefined],
      ['toolu_b', 'get_time', { tz: 'Europe/Paris' }, undefined],
      ['toolu_c', 'get_location', {}, undefined],
    ]);
    expect(done).toEqual([
      { index: 0, arguments: '{"city": "Paris"}' },
      { index: 1, arguments: '{"tz": "Europe/Paris"}' },
      { index: 2, arguments: '{}' },
    ]);
  });

  it('appends citations_delta to the text block', () => {
    const citation = {
      type: 'char_location',
      cited_text: 'The grass is green.',
      document_index: 0,
      document_title: 'Facts',
      start_char_index: 0,
      end_char_index: 20,
    };
    const listener = run([
      messageStart(),
      blockStart(0, { type: 'text', text: '', citations: [] }),
      delta(0, { type: 'citations_delta', citation }),
      delta(0, { type: 'text_delta', text: 'the grass is green' }),
      blockStop(0),
      messageDelta('end_turn'),
      messageStop,
    ]);
    expect(listener.end().content).toEqual([{ type: 'text', text: 'the grass is green', citations: [citation] }]);
  });

  it('joins text and thinking in index order with nothing between', () => {
    const listener = run([
      messageStart(),
      ...thinkingBlock(0, 'sig-a', 'first '),
      ...textBlock(1, 'One.'),
      ...thinkingBlock(2, 'sig-b', 'second'),
      ...textBlock(3, 'Two.'),
      messageDelta('end_turn'),
      messageStop,
    ]);
    expect(listener.text).toBe('One.Two.');
    expect(listener.thinking).toBe('first second');
  });

  it('keeps redacted_thinking unchanged', () => {
    const listener = run([
      messageStart(),
      blockStart(0, { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' }),
      blockStop(0),
      ...textBlock(1, 'ok'),
      messageDelta('end_turn'),
      messageStop,
    ]);
    expect(listener.end().content[0]).toEqual({ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' });
  });
});

describe('MessagesStreamListener: stop reasons and invalid input', () => {
  it('a tool_use cut by max_tokens keeps input {} and gets input_error; nothing is salvaged', () => {
    const listener = run([
      messageStart(),
      ...toolUseBlock(0, 'toolu_x', 'write_file', '{"path": "a.txt", "content": "lorem ip'),
      messageDelta('max_tokens', { output_tokens: 1024 }),
      messageStop,
    ]);
    const [tool] = listener.toolUses;
    expect(tool?.input).toEqual({});
    expect(tool?.input_error?.raw).toBe('{"path": "a.txt", "content": "lorem ip');
    expect(tool?.input_error?.message).toMatch(/not valid JSON/);
    expect(listener.stopReason).toBe('max_tokens');
    expect(listener.status).toBe('completed');
  });

  it('input that is JSON but not an object is an input_error', () => {
    const listener = run([
      messageStart(),
      ...toolUseBlock(0, 'toolu_x', 'f', '[1, 2]'),
      messageDelta('tool_use'),
      messageStop,
    ]);
    expect(listener.toolUses[0]?.input).toEqual({});
    expect(listener.toolUses[0]?.input_error).toEqual({ message: 'Tool input is not a JSON object', raw: '[1, 2]' });
  });

  it('refusal finishes as content_filter', () => {
    const listener = new MessagesStreamListener();
    let reason: string | undefined;
    listener.on('finish', (e) => (reason = e.finishReason));
    run([messageStart(), ...textBlock(0, 'I can'), messageDelta('refusal'), messageStop], listener);
    expect(listener.stopReason).toBe('refusal');
    expect(reason).toBe('content_filter');
  });
});

describe('MessagesStreamListener: usage', () => {
  it('message_delta counters replace message_start values; nulls do not', () => {
    const listener = run([
      messageStart({ input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5 }),
      ...textBlock(0, 'x'),
      messageDelta('end_turn', {
        input_tokens: 2679,
        output_tokens: 42,
        cache_read_input_tokens: null,
        server_tool_use: { web_search_requests: 1 },
      }),
      messageStop,
    ]);
    expect(listener.usage).toEqual({
      input_tokens: 2679,
      output_tokens: 42,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 5,
      server_tool_use: { web_search_requests: 1 },
      service_tier: 'standard',
    });
  });

  it('a partial before message_delta keeps message_start usage', () => {
    const listener = run([
      messageStart({ input_tokens: 30, output_tokens: 1 }),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'Hi' }),
    ]);
    expect(() => listener.end()).toThrow(StreamIncompleteError);
    const partial = (listener.error as StreamIncompleteError).partial as { usage: unknown; content: unknown };
    expect(partial.usage).toMatchObject({ input_tokens: 30, output_tokens: 1 });
    expect(partial.content).toEqual([{ type: 'text', text: 'Hi' }]);
  });
});

describe('MessagesStreamListener: server tools and unknown types', () => {
  it('keeps server_tool_use and web_search_tool_result in content, out of toolUses, with grown usage', () => {
    const result = {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_014hJH82Qum7Td6UV8gDXThB',
      content: [
        {
          type: 'web_search_result',
          title: 'Weather in NYC',
          url: 'https://weather.example/nyc',
          encrypted_content: 'Eo8BCioIAhgB',
          page_age: null,
        },
      ],
    };
    const listener = new MessagesStreamListener();
    const starts: string[] = [];
    listener.on('tool_call.start', (e) => starts.push(e.id));
    run(
      [
        messageStart({ input_tokens: 2679, output_tokens: 3 }),
        ...textBlock(0, "I'll search."),
        blockStart(1, {
          type: 'server_tool_use',
          id: 'srvtoolu_014hJH82Qum7Td6UV8gDXThB',
          name: 'web_search',
          input: {},
        }),
        delta(1, { type: 'input_json_delta', partial_json: '' }),
        delta(1, { type: 'input_json_delta', partial_json: '{"query": "weather NYC today"}' }),
        blockStop(1),
        blockStart(2, result),
        blockStop(2),
        ...textBlock(3, 'It is sunny.'),
        messageDelta('end_turn', {
          input_tokens: 10682,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 510,
          server_tool_use: { web_search_requests: 1 },
        }),
        messageStop,
      ],
      listener,
    );
    const content = listener.end().content;
    expect(content.map((b) => b.type)).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'text']);
    expect(content[1]).toMatchObject({ type: 'server_tool_use', input: { query: 'weather NYC today' } });
    expect(content[2]).toEqual(result);
    expect(listener.toolUses).toEqual([]);
    expect(starts).toEqual([]);
    expect(listener.text).toBe("I'll search.It is sunny.");
    expect(listener.usage).toMatchObject({
      input_tokens: 10682,
      output_tokens: 510,
      server_tool_use: { web_search_requests: 1 },
    });
  });

  it('keeps unknown blocks in index order; unknown deltas and events change nothing', () => {
    const listener = run([
      messageStart(),
      { type: 'future_event', payload: 1 },
      ...textBlock(0, 'a'),
      blockStart(1, { type: 'hologram', frames: 3 }),
      delta(1, { type: 'hologram_delta', frame: 4 }),
      delta(1, { type: 'text_delta', text: 'ignored on an unknown block' }),
      blockStop(1),
      blockStart(2, { type: 'text', text: '' }),
      delta(2, { type: 'sparkle_delta', amount: 9 }),
      delta(2, { type: 'text_delta', text: 'b' }),
      blockStop(2),
      messageDelta('end_turn'),
      messageStop,
    ]);
    expect(listener.end().content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'hologram', frames: 3 },
      { type: 'text', text: 'b' },
    ]);
  });
});

describe('MessagesStreamListener: the precise rules', () => {
  it('message_delta without message_stop is incomplete, with the stop reason in the partial', () => {
    const listener = run([messageStart(), ...textBlock(0, 'done'), messageDelta('end_turn')]);
    let thrown: unknown;
    try {
      listener.end();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StreamIncompleteError);
    expect((thrown as StreamIncompleteError).partial).toMatchObject({
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'done' }],
    });
    expect(listener.status).toBe('failed');
  });

  it('an error event mid-stream is an ApiError with code and type = error.type and the partial message', () => {
    const listener = new MessagesStreamListener();
    const errors: unknown[] = [];
    listener.on('error', (e) => errors.push(e.error));
    const error = failing(
      [
        messageStart(),
        blockStart(0, { type: 'text', text: '' }),
        delta(0, { type: 'text_delta', text: 'Once upon' }),
        overloaded(),
      ],
      listener,
    ) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('overloaded_error');
    expect(error.type).toBe('overloaded_error');
    expect(error.message).toBe('Overloaded');
    expect(error.status).toBeUndefined();
    expect(error.partial).toMatchObject({ content: [{ type: 'text', text: 'Once upon' }], stop_reason: null });
    expect(errors).toEqual([error]);
    expect(listener.status).toBe('failed');
    expect(() => listener.end()).toThrow(error);
  });

  it('an error before message_start has no partial', () => {
    const error = failing([ping, overloaded()]) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.partial).toBeUndefined();
  });

  it('ignores events after message_stop, error included', () => {
    const listener = run([...helloStream(), ...textBlock(1, 'late'), overloaded(), messageStart()]);
    expect(listener.status).toBe('completed');
    expect(listener.text).toBe('Hello!');
    expect(listener.events).toHaveLength(helloStream().length);
  });

  it('a second message_start is a ProtocolError with the partial', () => {
    const error = failing([messageStart(), ...textBlock(0, 'a'), messageStart()]) as ProtocolError;
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/second message_start/);
    expect(error.partial).toMatchObject({ content: [{ type: 'text', text: 'a' }] });
    expect(error.line).toContain('message_start');
  });

  it('content before message_start, and deltas for blocks never opened, are ProtocolErrors', () => {
    expect(failing(textBlock(0, 'x'))).toBeInstanceOf(ProtocolError);
    expect(failing([messageStart(), delta(3, { type: 'text_delta', text: 'x' })])).toBeInstanceOf(ProtocolError);
    expect(failing([messageStart(), ...textBlock(0, 'x'), delta(0, { type: 'text_delta', text: 'y' })])).toBeInstanceOf(
      ProtocolError,
    );
    expect(
      failing([
        messageStart(),
        blockStart(0, { type: 'text', text: '' }),
        delta(0, { type: 'input_json_delta', partial_json: '{' }),
      ]),
    ).toBeInstanceOf(ProtocolError);
  });

  it('an unfinished tool_use in a partial keeps id and name with its raw text in input_error.raw', () => {
    const listener = run([
      messageStart(),
      ...textBlock(0, 'Looking.'),
      blockStart(1, { type: 'tool_use', id: 'toolu_9', name: 'search', input: {} }),
      delta(1, { type: 'input_json_delta', partial_json: '{"q": "ca' }),
    ]);
    expect(() => listener.end()).toThrow(StreamIncompleteError);
    const partial = listener.error?.partial as { content: unknown[] };
    expect(partial.content[1]).toEqual({
      type: 'tool_use',
      id: 'toolu_9',
      name: 'search',
      input: {},
      input_error: { message: expect.stringMatching(/cut off/), raw: '{"q": "ca' },
    });
  });

  it('the partial is a copy: the live message is not affected by it', () => {
    const listener = run([
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'abc' }),
    ]);
    const block = listener.snapshot()?.content[0];
    if (!block || !isTextBlock(block)) throw new Error('expected a text block');
    block.text = 'changed';
    expect(listener.text).toBe('abc');
  });
});

describe('MessagesStreamListener.pushSse', () => {
  it('parses the data, dispatching on its type', () => {
    const listener = new MessagesStreamListener();
    for (const event of helloStream()) listener.pushSse({ event: 'message', data: JSON.stringify(event) });
    expect(listener.end().content).toEqual([{ type: 'text', text: 'Hello!' }]);
  });

  it('unparseable data is a ProtocolError carrying the line and the partial', () => {
    const listener = new MessagesStreamListener();
    listener.pushSse({ event: 'message_start', data: JSON.stringify(messageStart()) });
    let thrown: unknown;
    try {
      listener.pushSse({ event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).line).toBe('{"type":"content_block_delta","index":0,');
    expect((thrown as ProtocolError).partial).toMatchObject({ id: 'msg_01XFDUDYJgAACzvnptvVoYEL', content: [] });
  });
});
