/**
 * Hostile server data: output and part indexes no API sends (huge, negative, fractional, skipped, out of order,
 * not numbers) cost nothing and break nothing, and `__proto__` / `constructor` keys in the JSON stay plain data.
 */
import type { Usage } from '@ai4ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ResponseObject, ResponsesStreamListener, type ResponsesStreamWarning } from '../src/index.js';
import { baseResponse } from './fixtures.js';

/** Every object in `value` has the prototype JSON.parse gives: Object.prototype, or Array.prototype for arrays. */
function expectPlainPrototypes(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  expect(Object.getPrototypeOf(value)).toBe(Array.isArray(value) ? Array.prototype : Object.prototype);
  for (const key of Object.keys(value)) expectPlainPrototypes(Reflect.get(value, key));
}

interface Item {
  at: number;
  kind: 'call' | 'message';
  /** Address the deltas by `item_id` alone (no `output_index`). */
  byId: boolean;
  /** Parts the stream skipped before the message's text part. */
  skip: number;
}

function itemEvents({ at, kind, byId, skip }: Item, i: number): unknown[] {
  if (kind === 'call') {
    const item = { type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: 'f', arguments: '', status: 'in_progress' };
    const address = byId ? { item_id: `fc_${i}` } : { output_index: at, item_id: `fc_${i}` };
    return [
      { type: 'response.output_item.added', output_index: at, item },
      { type: 'response.function_call_arguments.delta', ...address, delta: '{"n":' },
      { type: 'response.function_call_arguments.delta', ...address, delta: `${i}}` },
    ];
  }
  const item = { type: 'message', id: `msg_${i}`, role: 'assistant', status: 'in_progress', content: [] };
  return [
    { type: 'response.output_item.added', output_index: at, item },
    { type: 'response.output_text.delta', output_index: at, item_id: `msg_${i}`, content_index: skip, delta: `t${i}` },
  ];
}

function expectedItem({ kind, skip }: Item, i: number): unknown {
  if (kind === 'call') {
    return { type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: 'f', arguments: `{"n":${i}}`, status: 'in_progress' };
  }
  const empty = { type: 'output_text', text: '', annotations: [] };
  const content = [...Array.from({ length: skip }, () => empty), { type: 'output_text', text: `t${i}`, annotations: [] }];
  return { type: 'message', id: `msg_${i}`, role: 'assistant', status: 'in_progress', content };
}

describe('ResponsesStreamListener: hostile indexes', () => {
  const item = fc.record({
    at: fc.oneof(fc.nat(20), fc.constantFrom(1e9, 2 ** 31, 2 ** 53)),
    kind: fc.constantFrom<Item['kind']>('call', 'message'),
    byId: fc.boolean(),
    skip: fc.nat(3),
  });
  /** Events whose index can never be right: each is a warning and changes nothing. */
  const broken = fc.constantFrom<(at: number) => unknown>(
    () => ({ type: 'response.output_item.added', output_index: -1, item: { type: 'message', id: 'x', content: [] } }),
    () => ({ type: 'response.output_item.added', output_index: 0.5, item: { type: 'message', id: 'x', content: [] } }),
    () => ({ type: 'response.output_item.added', output_index: '0', item: { type: 'message', id: 'x', content: [] } }),
    () => ({ type: 'response.output_text.delta', output_index: Number.POSITIVE_INFINITY, content_index: 0, delta: 'x' }),
    () => ({ type: 'response.function_call_arguments.delta', output_index: -1e9, delta: 'x' }),
    (at) => ({ type: 'response.output_text.delta', output_index: at, content_index: 1e9, delta: 'x' }),
    (at) => ({ type: 'response.output_text.delta', output_index: at, content_index: -1, delta: 'x' }),
    (at) => ({ type: 'response.content_part.added', output_index: at, content_index: 2 ** 40, part: { type: 'output_text', text: 'x', annotations: [] } }),
  );

  it('items at any distinct indexes, in any order, come out in index order, calls numbered in arrival order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(item, { maxLength: 8, selector: (it) => it.at }),
        fc.array(fc.tuple(broken, fc.nat()), { maxLength: 3 }),
        (items, injected) => {
          const events: unknown[] = [
            { type: 'response.created', response: baseResponse() },
            ...items.flatMap(itemEvents),
          ];
          // Broken events land anywhere after response.created; those aimed at an item aim at a message.
          const message = items.find((it) => it.kind === 'message');
          for (const [make, n] of injected) events.splice(1 + (n % events.length), 0, make(message?.at ?? -1));
          events.push({ type: 'response.completed', response: baseResponse({ status: 'completed' }) });
          const listener = new ResponsesStreamListener();
          const starts: unknown[] = [];
          const warnings: ResponsesStreamWarning[] = [];
          listener.on('tool_call.start', (event) => starts.push([event.index, event.id]));
          listener.on('warning', (warning) => warnings.push(warning));
          for (const event of events) listener.push(event);
          const response: ResponseObject = listener.end();

          const sorted = items.map((it, i) => ({ it, i })).sort((a, b) => a.it.at - b.it.at);
          expect(response.output).toEqual(sorted.map(({ it, i }) => expectedItem(it, i)));
          expect(listener.outputText).toBe(sorted.flatMap(({ it, i }) => (it.kind === 'message' ? [`t${i}`] : [])).join(''));
          const calls = items.flatMap((it, i) => (it.kind === 'call' ? [`call_${i}`] : []));
          expect(starts).toEqual(calls.map((id, position) => [position, id]));
          expect(warnings.filter((w) => w.code === 'malformed_event')).toHaveLength(injected.length);
          expectPlainPrototypes(response);
        },
      ),
    );
  });
});

describe('ResponsesStreamListener: __proto__ in server data', () => {
  const feed = (...lines: string[]): ResponsesStreamListener => {
    const listener = new ResponsesStreamListener();
    for (const data of lines) listener.pushSse({ event: 'message', data });
    return listener;
  };

  it('usage with __proto__ keeps the numbers the JSON says', () => {
    const usages: Usage[] = [];
    const listener = new ResponsesStreamListener().on('usage', (event) => usages.push(event.usage));
    for (const data of [
      '{"type":"response.created","response":{"id":"r","object":"response","model":"m","status":"in_progress","output":[]}}',
      '{"type":"response.completed","response":{"id":"r","object":"response","model":"m","status":"completed","output":[],"usage":{"input_tokens":10,"output_tokens":2,"__proto__":{"total_tokens":1000000,"input_tokens_details":{"cached_tokens":5}}}}}',
    ]) {
      listener.pushSse({ event: 'message', data });
    }
    const response = listener.end();
    expect(usages).toEqual([{ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }]);
    expect(Object.hasOwn(response.usage ?? {}, '__proto__')).toBe(true);
    expectPlainPrototypes(response);
  });

  it('__proto__ and constructor keys first seen in .done events stay own data when merged over what was built', () => {
    const listener = feed(
      '{"type":"response.created","response":{"id":"r","object":"response","model":"m","status":"in_progress","output":[],"__proto__":{"id":"evil"}}}',
      '{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg","role":"assistant","status":"in_progress","content":[]}}',
      '{"type":"response.content_part.added","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[],"constructor":{"a":1}}}',
      '{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"hi"}',
      '{"type":"response.content_part.done","output_index":0,"content_index":0,"part":{"type":"output_text","text":"hi","annotations":[],"__proto__":{"text":"evil"}}}',
      '{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hi","annotations":[]}],"__proto__":{"role":"evil"},"constructor":"c"}}',
      '{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc","call_id":"c","name":"f","arguments":""}}',
      '{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{\\"__proto__\\":{\\"admin\\":true}}","__proto__":{"name":"evil"}}',
      '{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc","call_id":"c","name":"f","arguments":"","__proto__":{"name":"evil"}}}',
      '{"type":"response.completed","response":{"id":"r","object":"response","model":"m","status":"completed","output":[]}}',
    );
    const response = listener.end();
    expectPlainPrototypes(response);
    expect(response.id).toBe('r');
    const [message, call] = response.output;
    expect(message).toEqual(
      JSON.parse(
        '{"type":"message","id":"msg","role":"assistant","status":"completed","__proto__":{"role":"evil"},"constructor":"c","content":[{"type":"output_text","text":"hi","annotations":[]}]}',
      ),
    );
    expect(call).toEqual(
      JSON.parse('{"type":"function_call","id":"fc","call_id":"c","name":"f","arguments":"{\\"__proto__\\":{\\"admin\\":true}}","__proto__":{"name":"evil"}}'),
    );
    expect(listener.outputText).toBe('hi');
  });
});
