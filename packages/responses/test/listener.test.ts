import { ApiError, ConnectionError, ProtocolError, StreamIncompleteError } from '@ai4ts/core';
import {
  type ResponseObject,
  ResponsesStreamListener,
  type ResponsesStreamWarning,
  replayEvents,
} from '@ai4ts/responses';
import { describe, expect, it } from 'vitest';
import {
  baseResponse,
  functionCallItem,
  type Json,
  messageItem,
  parallelCallsScript,
  Script,
  textScript,
  USAGE,
} from './fixtures.js';

/** Every event pushed and the input ended, whatever fails on the way (the listener keeps the error). */
function run(events: readonly unknown[], listener = new ResponsesStreamListener()): ResponsesStreamListener {
  return replayEvents(events, listener);
}

/** Every event a listener emits, in order, as [name, payload]. */
function record(listener: ResponsesStreamListener): [string, unknown][] {
  const seen: [string, unknown][] = [];
  for (const name of [
    'content',
    'reasoning',
    'tool_call.start',
    'tool_call.delta',
    'tool_call.done',
    'usage',
    'finish',
    'error',
    'unknown',
    'warning',
  ] as const) {
    listener.on(name, (payload: unknown) => seen.push([name, payload]));
  }
  return seen;
}

describe('ResponsesStreamListener: text, annotations and reasoning summaries', () => {
  it('rebuilds the message, its annotations and the reasoning summary, and emits normalized events', () => {
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    run(textScript().events, listener);

    expect(listener.status).toBe('completed');
    expect(listener.error).toBeUndefined();
    expect(listener.outputText).toBe('Paris is the capital of France — café ☕');
    expect(listener.reasoningSummary).toBe('**Planning** the answer\n\n**Checking** the sources');

    const response = listener.response;
    expect(response.id).toBe('resp_1');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(listener.outputText);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    const message = response.output[1];
    if (message?.type !== 'message') throw new Error('expected a message');
    expect(message.content[0]).toMatchObject({
      type: 'output_text',
      annotations: [{ type: 'url_citation', url: 'https://example.com/paris', start_index: 0, end_index: 11 }],
    });
    const reasoning = response.output[0];
    if (reasoning?.type !== 'reasoning') throw new Error('expected reasoning');
    expect(reasoning.summary).toEqual([
      { type: 'summary_text', text: '**Planning** the answer' },
      { type: 'summary_text', text: '**Checking** the sources' },
    ]);

    const content = seen.filter(([name]) => name === 'content').map(([, e]) => e as { delta: string; snapshot: string });
    expect(content.map((e) => e.delta)).toEqual(['Paris is ', 'the capital', ' of France — ', 'café ☕']);
    expect(content.at(-1)?.snapshot).toBe('Paris is the capital of France — café ☕');
    const reasoningEvents = seen.filter(([name]) => name === 'reasoning').map(([, e]) => e as { snapshot: string });
    expect(reasoningEvents.at(-1)?.snapshot).toBe(listener.reasoningSummary);

    expect(seen.filter(([name]) => name === 'usage').map(([, e]) => e)).toEqual([
      {
        type: 'usage',
        usage: {
          prompt_tokens: 120,
          completion_tokens: 40,
          total_tokens: 160,
          prompt_tokens_details: { cached_tokens: 100 },
          completion_tokens_details: { reasoning_tokens: 12 },
        },
        raw: USAGE,
      },
    ]);
    expect(seen.at(-1)).toEqual(['finish', { type: 'finish', finishReason: 'stop', choice: 0 }]);
  });

  it('keeps a refusal as its own content part', () => {
    const s = new Script().start();
    const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
    s.add('response.output_item.added', {
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    s.add('response.content_part.added', { ...at, part: { type: 'refusal', refusal: '' } });
    s.add('response.refusal.delta', { ...at, delta: "I can't " });
    s.add('response.refusal.delta', { ...at, delta: 'help with that.' });
    const partial = new ResponsesStreamListener();
    for (const event of s.events) partial.push(event);
    const streamed = partial.response.output[0];
    expect(streamed?.type === 'message' && streamed.content[0]).toEqual({ type: 'refusal', refusal: "I can't help with that." });

    s.add('response.refusal.done', { ...at, refusal: "I can't help with that." });
    s.add('response.content_part.done', { ...at, part: { type: 'refusal', refusal: "I can't help with that." } });
    const item = {
      id: 'msg_1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'refusal', refusal: "I can't help with that." }],
    };
    s.add('response.output_item.done', { output_index: 0, item });
    s.completed([item]);
    const listener = run(s.events);
    expect(listener.status).toBe('completed');
    expect(listener.outputText).toBe('');
    const message = listener.response.output[0];
    expect(message?.type === 'message' && message.content).toEqual([
      { type: 'refusal', refusal: "I can't help with that." },
    ]);
  });
});

describe('ResponsesStreamListener: function calls', () => {
  it('keeps two parallel calls apart by call_id, with interleaved argument deltas', () => {
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    run(parallelCallsScript().events, listener);

    expect(listener.status).toBe('completed');
    expect(Object.keys(listener.functionCalls)).toEqual(['call_weather', 'call_time']);
    expect(listener.functionCalls.call_weather).toMatchObject({
      name: 'get_weather',
      arguments: '{"city":"Paris","unit":"c"}',
    });
    expect(listener.functionCalls.call_time).toMatchObject({ name: 'get_time', arguments: '{"tz":"Europe/Paris"}' });

    const starts = seen.filter(([name]) => name === 'tool_call.start').map(([, e]) => e);
    expect(starts).toEqual([
      { type: 'tool_call.start', index: 0, id: 'call_weather', name: 'get_weather', choice: 0 },
      { type: 'tool_call.start', index: 1, id: 'call_time', name: 'get_time', choice: 0 },
    ]);
    const deltas = seen.filter(([name]) => name === 'tool_call.delta').map(([, e]) => e as { id: string; delta: string });
    expect(deltas.filter((d) => d.id === 'call_weather').map((d) => d.delta).join('')).toBe('{"city":"Paris","unit":"c"}');
    expect(deltas.filter((d) => d.id === 'call_time').map((d) => d.delta).join('')).toBe('{"tz":"Europe/Paris"}');
    const done = seen.filter(([name]) => name === 'tool_call.done').map(([, e]) => e);
    expect(done).toEqual([
      {
        type: 'tool_call.done',
        index: 0,
        id: 'call_weather',
        name: 'get_weather',
        arguments: '{"city":"Paris","unit":"c"}',
        choice: 0,
      },
      { type: 'tool_call.done', index: 1, id: 'call_time', name: 'get_time', arguments: '{"tz":"Europe/Paris"}', choice: 0 },
    ]);
    expect(seen.at(-1)).toEqual(['finish', { type: 'finish', finishReason: 'tool_calls', choice: 0 }]);
  });

  it('a cut stream keeps each partial argument string under its call_id and never emits tool_call.done', () => {
    const events = parallelCallsScript().events;
    const cut = events.slice(0, events.findIndex((e) => e.type === 'response.function_call_arguments.done'));
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    // One delta of each call fewer: the cut falls inside both argument strings.
    run(cut.slice(0, -2), listener);

    expect(listener.status).toBe('failed');
    expect(listener.error).toBeInstanceOf(StreamIncompleteError);
    const partial = listener.error?.partial;
    const calls = partial?.output.filter((item) => item.type === 'function_call');
    expect(calls?.map((c) => [c.call_id, c.arguments])).toEqual([
      ['call_weather', '{"city":"Paris"'],
      ['call_time', '{"tz":"Europe/Paris"'],
    ]);
    expect(listener.functionCalls.call_time?.arguments).toBe('{"tz":"Europe/Paris"');
    expect(seen.some(([name]) => name === 'tool_call.done')).toBe(false);
    expect(seen.some(([name]) => name === 'finish')).toBe(false);
    expect(seen.at(-1)?.[0]).toBe('error');
  });

  it('builds a custom tool call input from its deltas', () => {
    const s = new Script().start();
    s.add('response.output_item.added', {
      output_index: 0,
      item: { id: 'ctc_1', type: 'custom_tool_call', call_id: 'call_sql', name: 'sql', input: '' },
    });
    s.add('response.custom_tool_call_input.delta', { item_id: 'ctc_1', output_index: 0, delta: 'SELECT 1' });
    s.add('response.custom_tool_call_input.delta', { item_id: 'ctc_1', output_index: 0, delta: ' FROM t' });
    const listener = new ResponsesStreamListener();
    for (const event of s.events) listener.push(event);
    expect(listener.response.output[0]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_sql', input: 'SELECT 1 FROM t' });
    listener.push({ type: 'response.custom_tool_call_input.done', output_index: 0, item_id: 'ctc_1', input: 'SELECT 2' });
    expect(listener.response.output[0]).toMatchObject({ input: 'SELECT 2' });
  });
});

describe('ResponsesStreamListener: built-in tools', () => {
  it('keeps a web_search_call item and follows its progress status', () => {
    const s = new Script().start();
    const at = { item_id: 'ws_1', output_index: 0 };
    s.add('response.output_item.added', {
      output_index: 0,
      item: { id: 'ws_1', type: 'web_search_call', status: 'in_progress' },
    });
    s.add('response.web_search_call.in_progress', at);
    s.add('response.web_search_call.searching', at);
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    for (const event of s.events) listener.push(event);
    expect(listener.response.output[0]).toEqual({ id: 'ws_1', type: 'web_search_call', status: 'searching' });

    s.add('response.web_search_call.completed', at);
    const searched = {
      id: 'ws_1',
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'capital of France' },
    };
    s.add('response.output_item.done', { output_index: 0, item: searched });
    for (const event of s.events.slice(-2)) listener.push(event);
    expect(listener.response.output[0]).toEqual(searched);
    expect(seen.filter(([name]) => name === 'unknown' || name === 'warning')).toEqual([]);
  });
});

describe('ResponsesStreamListener: terminal semantics', () => {
  it('response.incomplete for max_output_tokens is a completed stream: the response incomplete, finish length', () => {
    const s = new Script().start().message(0, 'msg_1', ['Once upon', ' a time']);
    s.add('response.incomplete', {
      response: baseResponse({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        output: [messageItem('msg_1', 'Once upon a time')],
        usage: USAGE,
      }),
    });
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    run(s.events, listener);
    expect(listener.status).toBe('completed');
    expect(listener.error).toBeUndefined();
    expect(listener.end()).toEqual(listener.response);
    expect(listener.response.status).toBe('incomplete');
    expect(listener.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(listener.outputText).toBe('Once upon a time');
    expect(seen.at(-1)).toEqual(['finish', { type: 'finish', finishReason: 'length', choice: 0 }]);
  });

  it('response.incomplete for content_filter finishes with content_filter', () => {
    const s = new Script().start();
    s.add('response.incomplete', {
      response: baseResponse({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } }),
    });
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    run(s.events, listener);
    expect(seen.at(-1)).toEqual(['finish', { type: 'finish', finishReason: 'content_filter', choice: 0 }]);
  });

  it('response.failed after output began is an ApiError with the code and the partial response', () => {
    const s = new Script().start();
    s.add('response.output_item.added', {
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    s.add('response.content_part.added', {
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    s.add('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Half an ans' });
    s.add('response.failed', {
      response: baseResponse({
        status: 'failed',
        error: { code: 'server_error', message: 'The model crashed' },
        output: [],
      }),
    });
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    run(s.events, listener);

    expect(listener.status).toBe('failed');
    const error = listener.error;
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('server_error');
    expect(error?.message).toBe('The model crashed');
    // The snapshot's empty output never erases what the deltas built.
    expect(error?.partial?.output_text).toBe('Half an ans');
    expect(error?.partial?.status).toBe('failed');
    expect(seen.filter(([name]) => name === 'error')).toEqual([['error', { type: 'error', error }]]);
    expect(seen.some(([name]) => name === 'finish')).toBe(false);
  });

  it.each([
    ['flat', { type: 'error', code: 'rate_limit_exceeded', message: 'Slow down', param: null }],
    ['nested', { type: 'error', error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Slow down' } }],
  ])('an %s error event after output began is an ApiError with code and partial', (_shape, errorEvent) => {
    const s = new Script().start().message(0, 'msg_1', ['Kept ', 'text']);
    s.add(errorEvent.type, errorEvent);
    const listener = run(s.events);
    expect(listener.status).toBe('failed');
    const error = listener.error as ApiError<ResponseObject>;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.message).toBe('Slow down');
    expect(error.partial?.output_text).toBe('Kept text');
  });

  it('a stream without a terminal event is a StreamIncompleteError carrying the partial response', () => {
    const events = textScript().events;
    const listener = run(events.slice(0, -3));
    expect(listener.status).toBe('failed');
    expect(listener.error).toBeInstanceOf(StreamIncompleteError);
    expect(listener.error?.partial?.output_text).toBe('Paris is the capital of France — café ☕');
    expect(listener.error?.partial?.status).toBe('in_progress');
  });

  it('events after the terminal one are kept in the trace and otherwise ignored', () => {
    const s = textScript();
    const after = [
      { type: 'response.output_text.delta', output_index: 1, content_index: 0, delta: 'LATE', sequence_number: 999 },
      '[DONE]',
    ];
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    run([...s.events, ...after], listener);
    expect(listener.status).toBe('completed');
    expect(listener.outputText).toBe('Paris is the capital of France — café ☕');
    expect(listener.events.slice(-2)).toEqual(after);
    expect(listener.lastEvent).toBe('[DONE]');
    expect(seen.filter(([name]) => name === 'warning' || name === 'unknown')).toEqual([]);
  });
});

describe('ResponsesStreamListener: authority of .done events and the terminal snapshot', () => {
  it('.done text replaces the deltas where they differ, and the content snapshot follows', () => {
    const s = new Script().start();
    const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
    s.add('response.output_item.added', {
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    s.add('response.output_text.delta', { ...at, delta: 'Helo' });
    s.add('response.output_text.done', { ...at, text: 'Hello' });
    s.add('response.output_item.added', {
      output_index: 1,
      item: { id: 'msg_2', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    s.add('response.output_text.delta', { item_id: 'msg_2', output_index: 1, content_index: 0, delta: '!' });
    const listener = new ResponsesStreamListener();
    const snapshots: string[] = [];
    listener.on('content', (e) => snapshots.push(e.snapshot));
    for (const event of s.events) listener.push(event);
    expect(listener.outputText).toBe('Hello!');
    expect(snapshots).toEqual(['Helo', 'Hello!']);
  });

  it('a listener that comes mid-stream gets snapshots of everything so far (none is kept while nobody listens)', () => {
    const s = new Script().start();
    const text = { item_id: 'msg_1', output_index: 1, content_index: 0 };
    const summary = { item_id: 'rs_1', output_index: 0 };
    s.add('response.output_item.added', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } });
    s.add('response.reasoning_summary_text.delta', { ...summary, summary_index: 0, delta: 'First' });
    s.add('response.reasoning_summary_text.delta', { ...summary, summary_index: 0, delta: ' part' });
    s.add('response.reasoning_summary_text.delta', { ...summary, summary_index: 1, delta: 'Second' });
    s.add('response.output_item.added', {
      output_index: 1,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    s.add('response.output_text.delta', { ...text, delta: 'Hel' });
    s.add('response.output_text.delta', { ...text, delta: 'lo' });
    s.add('response.output_text.delta', { ...text, delta: '!' });
    const listener = new ResponsesStreamListener();
    const snapshots: string[] = [];
    const reasoning: string[] = [];
    s.events.forEach((event, i) => {
      // Listeners attach in the middle of the summary's first part and of the text.
      if (i === 4) listener.on('reasoning', (e) => reasoning.push(e.snapshot));
      if (i === 8) listener.on('content', (e) => snapshots.push(e.snapshot));
      listener.push(event);
    });
    expect(reasoning).toEqual(['First part', 'First part\n\nSecond']);
    expect(snapshots).toEqual(['Hello', 'Hello!']);
  });

  it('raw reasoning text: a .done correction and a listener that comes mid-stream get the snapshot of the items', () => {
    const s = new Script().start();
    const first = { item_id: 'rs_1', output_index: 0, content_index: 0 };
    const second = { item_id: 'rs_2', output_index: 1, content_index: 0 };
    s.add('response.output_item.added', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } });
    s.add('response.reasoning_text.delta', { ...first, delta: 'Thnk' });
    s.add('response.reasoning_text.done', { ...first, text: 'Think. ' });
    s.add('response.output_item.added', { output_index: 1, item: { id: 'rs_2', type: 'reasoning', summary: [] } });
    s.add('response.reasoning_text.delta', { ...second, delta: 'Again' });
    s.add('response.reasoning_text.delta', { ...second, delta: '.' });
    // Listening from the start: the correction shows in the next snapshot.
    const listened = new ResponsesStreamListener();
    const all: string[] = [];
    listened.on('reasoning', (e) => all.push(e.snapshot));
    for (const event of s.events) listened.push(event);
    expect(all).toEqual(['Thnk', 'Think. Again', 'Think. Again.']);
    // Listening from the second item's first delta: nothing was kept before, the snapshot is rebuilt from the items.
    const late = new ResponsesStreamListener();
    const seen: string[] = [];
    s.events.forEach((event, i) => {
      if (i === 5) late.on('reasoning', (e) => seen.push(e.snapshot));
      late.push(event);
    });
    expect(seen).toEqual(['Think. Again', 'Think. Again.']);
  });

  it('a delta after its part or item was replaced builds on the replacement, not on what it replaced', () => {
    const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
    const listener = new ResponsesStreamListener();
    listener.push({ type: 'response.output_text.delta', ...at, delta: 'a' });
    listener.push({ type: 'response.content_part.done', ...at, part: { type: 'output_text', text: 'ab', annotations: [] } });
    listener.push({ type: 'response.output_text.delta', ...at, delta: 'c' });
    const item = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed' };
    listener.push({ type: 'response.output_item.done', output_index: 0, item: { ...item, content: [{ type: 'output_text', text: 'abcd', annotations: [] }] } });
    listener.push({ type: 'response.output_text.delta', ...at, delta: 'e' });
    listener.push({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 1, summary_index: 0, delta: 'x' });
    listener.push({ type: 'response.output_text.delta', ...at, delta: 'f' });
    expect(listener.outputText).toBe('abcdef');
    expect(listener.reasoningSummary).toBe('x');
  });

  it('an empty .done value or a .done item without content never erases what the deltas built', () => {
    const s = new Script().start();
    const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
    s.add('response.output_item.added', {
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    s.add('response.output_text.delta', { ...at, delta: 'built text' });
    s.add('response.output_text.done', { ...at, text: '' });
    s.add('response.output_item.done', {
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [] },
    });
    s.add('response.output_item.added', {
      output_index: 1,
      item: functionCallItem('fc_1', 'call_1', 'f', '', 'in_progress'),
    });
    s.add('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 1, delta: '{"a":1}' });
    s.add('response.function_call_arguments.done', { item_id: 'fc_1', output_index: 1, arguments: '' });
    const listener = new ResponsesStreamListener();
    for (const event of s.events) listener.push(event);
    expect(listener.outputText).toBe('built text');
    expect(listener.response.output[0]).toMatchObject({ status: 'completed' });
    expect(listener.functionCalls.call_1?.arguments).toBe('{"a":1}');
  });

  it('the terminal snapshot replaces built items when it is complete', () => {
    const s = new Script().start().message(0, 'msg_1', ['draft']);
    s.completed([messageItem('msg_final', 'final text')]);
    const listener = run(s.events);
    expect(listener.outputText).toBe('final text');
    expect(listener.response.output[0]?.id).toBe('msg_final');
    expect(listener.response.usage).toEqual(USAGE);
  });

  it('the terminal snapshot never erases: an empty or shorter output keeps the built items', () => {
    for (const output of [[], [messageItem('msg_1', 'only the first')]]) {
      const s = new Script().start().message(0, 'msg_1', ['first']).message(1, 'msg_2', [' second']);
      s.completed(output as Json[]);
      const listener = run(s.events);
      expect(listener.status).toBe('completed');
      expect(listener.response.output.map((item) => item.id)).toEqual(['msg_1', 'msg_2']);
      expect(listener.outputText).toBe('first second');
      expect(listener.response.usage).toEqual(USAGE);
    }
  });

  it('calls first seen in the terminal snapshot are announced and finished', () => {
    const s = new Script().start();
    s.completed([functionCallItem('fc_1', 'call_1', 'lookup', '{"q":"x"}')]);
    const listener = new ResponsesStreamListener();
    const seen = record(listener);
    run(s.events, listener);
    expect(seen.filter(([name]) => name.startsWith('tool_call')).map(([name]) => name)).toEqual([
      'tool_call.start',
      'tool_call.done',
    ]);
    expect(seen.at(-1)).toEqual(['finish', { type: 'finish', finishReason: 'tool_calls', choice: 0 }]);
  });
});

describe('ResponsesStreamListener: gateways and future API versions', () => {
  it('tracks items by output_index when item ids change between events', () => {
    const s = new Script().start();
    s.add('response.output_item.added', {
      output_index: 0,
      item: functionCallItem('fc_a', 'call_1', 'search', '', 'in_progress'),
    });
    s.add('response.function_call_arguments.delta', { item_id: 'fc_b', output_index: 0, delta: '{"q":' });
    s.add('response.function_call_arguments.delta', { item_id: 'fc_c', output_index: 0, delta: '"tea"}' });
    s.add('response.output_item.added', {
      output_index: 1,
      item: { id: 'msg_a', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    s.add('response.output_text.delta', { item_id: 'msg_b', output_index: 1, content_index: 0, delta: 'Searching' });
    s.add('response.output_item.done', {
      output_index: 0,
      item: functionCallItem('fc_z', 'call_1', 'search', '{"q":"tea"}'),
    });
    const listener = new ResponsesStreamListener();
    for (const event of s.events) listener.push(event);
    expect(listener.response.output).toHaveLength(2);
    expect(listener.functionCalls.call_1).toMatchObject({ id: 'fc_z', arguments: '{"q":"tea"}' });
    expect(listener.outputText).toBe('Searching');
  });

  it('builds items whose output_item.added and content_part.added never came', () => {
    const listener = new ResponsesStreamListener();
    listener.push({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi' });
    listener.push({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: '{}' });
    expect(listener.outputText).toBe('Hi');
    expect(listener.response.output[1]).toMatchObject({ type: 'function_call', arguments: '{}' });
  });

  it('orders items by output_index whatever the arrival order or gaps, and rejects impossible indexes', () => {
    const listener = new ResponsesStreamListener();
    const warnings: string[] = [];
    listener.on('warning', (w) => warnings.push(w.code));
    const delta = (output_index: number, text: string) =>
      listener.push({ type: 'response.output_text.delta', output_index, content_index: 0, delta: text });
    delta(1_000_000_000, 'C');
    delta(2, 'B');
    delta(0, 'A');
    delta(-1, 'x');
    delta(1.5, 'y');
    listener.push({ type: 'response.output_text.delta', output_index: 0, content_index: 1e9, delta: 'z' });
    listener.push({ type: 'response.reasoning_summary_text.delta', output_index: 5, summary_index: -2, delta: 'w' });
    expect(listener.outputText).toBe('ABC');
    expect(listener.response.output).toHaveLength(3);
    expect(warnings).toEqual(['malformed_event', 'malformed_event', 'malformed_event', 'malformed_event']);
  });

  it('builds raw reasoning text and code interpreter code from their deltas', () => {
    const listener = new ResponsesStreamListener();
    const reasoning: string[] = [];
    listener.on('reasoning', (e) => reasoning.push(e.snapshot));
    for (const delta of ['Think', 'ing']) {
      listener.push({ type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta });
    }
    listener.push({
      type: 'response.output_item.added',
      output_index: 1,
      item: { id: 'ci_1', type: 'code_interpreter_call', status: 'in_progress', code: '' },
    });
    for (const delta of ['print(', '1)']) {
      listener.push({ type: 'response.code_interpreter_call_code.delta', item_id: 'ci_1', output_index: 1, delta });
    }
    listener.push({ type: 'response.code_interpreter_call.interpreting', item_id: 'ci_1', output_index: 1 });
    expect(reasoning).toEqual(['Think', 'Thinking']);
    expect(listener.response.output).toEqual([
      { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Thinking' }] },
      { id: 'ci_1', type: 'code_interpreter_call', status: 'interpreting', code: 'print(1)' },
    ]);
  });

  it('keeps unknown event types in the trace and emits them as unknown', () => {
    const s = textScript();
    const future = { type: 'response.hologram.delta', sequence_number: 3, output_index: 9, delta: '∆' };
    const events = [...s.events];
    events.splice(3, 0, future);
    const listener = new ResponsesStreamListener();
    const unknown: unknown[] = [];
    listener.on('unknown', (event) => unknown.push(event));
    run(events, listener);
    expect(unknown).toEqual([future]);
    expect(listener.events).toContain(future);
    expect(listener.status).toBe('completed');
    expect(listener.outputText).toBe('Paris is the capital of France — café ☕');
  });

  it('reports sequence_number gaps and regressions as warnings, not failures', () => {
    const s = new Script().start();
    s.skip(2).message(0, 'msg_1', ['a', 'b']);
    const events: Json[] = [...s.events];
    events.push({ ...(events[4] as Json) }); // a replayed delta: regression
    const listener = new ResponsesStreamListener();
    const warnings: ResponsesStreamWarning[] = [];
    listener.on('warning', (w) => warnings.push(w));
    for (const event of events) listener.push(event);
    expect(warnings.map((w) => w.code)).toEqual(['sequence_gap', 'sequence_regression']);
    expect(warnings[0]?.message).toBe('sequence_number 4 after 1 (2 missing)');
    expect(listener.status).toBe('streaming');
  });

  it('warns about a known event with a malformed payload and goes on', () => {
    const listener = new ResponsesStreamListener();
    const warnings: ResponsesStreamWarning[] = [];
    listener.on('warning', (w) => warnings.push(w));
    listener.push({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 42 });
    listener.push({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'ok' });
    expect(warnings.map((w) => w.code)).toEqual(['malformed_event']);
    expect(listener.outputText).toBe('ok');
  });

  it('never mutates the events it was given (the trace stays replayable)', () => {
    const events = textScript().events;
    const before = structuredClone(events);
    run(events);
    expect(events).toEqual(before);
  });
});

describe('ResponsesStreamListener: the listener contract', () => {
  const sse = (data: unknown) => ({ event: 'message', data: typeof data === 'string' ? data : JSON.stringify(data), id: '' });

  it('status goes pending, streaming, completed; end() returns the response; later input only joins the trace', () => {
    const listener = new ResponsesStreamListener();
    expect(listener.status).toBe('pending');
    const events = textScript().events;
    listener.pushSse(sse(events[0]));
    expect(listener.status).toBe('streaming');
    for (const event of events.slice(1)) listener.pushSse(sse(event));
    expect(listener.status).toBe('completed');
    const late = { type: 'error', code: 'server_error', message: 'late' };
    listener.push(late);
    listener.pushSse(sse('not json'));
    expect(listener.status).toBe('completed');
    expect(listener.error).toBeUndefined();
    expect(listener.events.slice(-2)).toEqual([late, 'not json']);
    expect(listener.end().output_text).toBe('Paris is the capital of France — café ☕');
  });

  it('push throws the recorded ApiError of an error event; later pushes are ignored and end() throws it again', () => {
    const listener = new ResponsesStreamListener();
    const errors: unknown[] = [];
    listener.on('error', (e) => errors.push(e.error));
    const s = new Script().start().message(0, 'msg_1', ['so far']);
    for (const event of s.events) listener.push(event);
    let thrown: unknown;
    try {
      listener.push({ type: 'error', code: 'server_error', message: 'Upstream died' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toBe(listener.error);
    expect(errors).toEqual([thrown]);
    expect(listener.status).toBe('failed');
    expect(listener.error?.partial?.output_text).toBe('so far');
    expect(() => listener.push({ type: 'response.completed', response: baseResponse({ status: 'completed' }) })).not.toThrow();
    expect(listener.status).toBe('failed');
    expect(() => listener.end()).toThrow(thrown as Error);
    expect(listener.fail(new Error('later'))).toBe(thrown);
    expect(errors).toHaveLength(1);
  });

  it('push throws at response.failed with the response error', () => {
    const listener = new ResponsesStreamListener();
    const failed = { type: 'response.failed', response: baseResponse({ status: 'failed', error: { code: 'x', message: 'no' } }) };
    expect(() => listener.push(failed)).toThrow(ApiError);
    expect(listener.error?.message).toBe('no');
    expect(listener.error?.partial?.status).toBe('failed');
  });

  it('pushSse throws a recorded ProtocolError for data that is not JSON, with the partial response', () => {
    const listener = new ResponsesStreamListener();
    for (const event of new Script().start().message(0, 'msg_1', ['kept']).events) listener.pushSse(sse(event));
    expect(() => listener.pushSse(sse('{"type":'))).toThrow(ProtocolError);
    expect(listener.status).toBe('failed');
    expect(listener.error).toBeInstanceOf(ProtocolError);
    expect((listener.error as ProtocolError).line).toBe('{"type":');
    expect(listener.error?.partial?.output_text).toBe('kept');
  });

  it('[DONE], blank data, unknown events, gaps and malformed events never throw and never fail', () => {
    const listener = new ResponsesStreamListener();
    const s = new Script().start().skip(3).message(0, 'msg_1', ['ok']);
    for (const event of s.events) listener.pushSse(sse(event));
    listener.pushSse(sse('[DONE]'));
    listener.pushSse(sse('  '));
    listener.push({ type: 'response.future.delta' });
    listener.push({ type: 'response.output_text.delta', output_index: -1, content_index: 0, delta: 'x' });
    expect(listener.status).toBe('streaming');
    expect(() => listener.end()).toThrow(StreamIncompleteError);
    expect(listener.status).toBe('failed');
  });

  it('end() without a terminal event records and throws StreamIncompleteError; nothing arrived, so no partial', () => {
    const listener = new ResponsesStreamListener();
    expect(() => listener.end()).toThrow(StreamIncompleteError);
    expect(listener.status).toBe('failed');
    expect(listener.error?.partial).toBeUndefined();
  });

  it('fail() before anything arrived attaches no partial; after, the response so far; it returns the first error', () => {
    const early = new ResponsesStreamListener();
    const refused = early.fail(new Error('ECONNREFUSED'));
    expect(refused).toBeInstanceOf(ConnectionError);
    expect(refused.partial).toBeUndefined();
    expect(early.status).toBe('failed');

    const listener = new ResponsesStreamListener();
    for (const event of new Script().start().message(0, 'msg_1', ['half']).events) listener.push(event);
    const cut = new ConnectionError<ResponseObject>('socket hang up');
    expect(listener.fail(cut)).toBe(cut);
    expect(cut.partial?.output_text).toBe('half');
    expect(listener.fail(new Error('second'))).toBe(cut);
    expect(() => listener.end()).toThrow(cut);
  });

  it('fail() after completion records nothing: the stream stays completed', () => {
    const listener = run(textScript().events);
    const error = listener.fail(new Error('after the end'));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(listener.status).toBe('completed');
    expect(listener.error).toBeUndefined();
  });
});
