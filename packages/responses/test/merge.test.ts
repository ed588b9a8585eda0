/** The listener's pure helpers: copies that never alias the event, merges that never erase, and the guards. */
import { describe, expect, it } from 'vitest';
import {
  copyRecord,
  doneText,
  isIndex,
  isMessagePart,
  isOutputItem,
  isSlot,
  MAX_INDEX_GAP,
  mergeRecord,
  outputTextOf,
  placeholder,
  shownText,
} from '../src/merge.js';
import type { OutputItem } from '../src/types.js';

describe('copyRecord', () => {
  it('copies the lists the listener builds on, so building on the copy never touches the original', () => {
    const original = {
      type: 'message',
      content: [{ type: 'output_text', text: 'a', annotations: [{ type: 'url_citation' }] }],
      vendor: { nested: true },
    };
    const before = structuredClone(original);
    const copy = copyRecord(original);
    const [part] = copy.content as { text: string; annotations: unknown[] }[];
    if (!part) throw new Error('expected a part');
    part.text += 'b';
    part.annotations.push({ type: 'file_citation' });
    (copy.content as unknown[]).push({ type: 'refusal', refusal: '' });
    expect(original).toEqual(before);
    expect(copy.vendor).toBe(original.vendor);
  });

  it('copies a part with annotations and a reasoning item summary', () => {
    const part = { type: 'output_text', text: '', annotations: [] as unknown[] };
    (copyRecord(part).annotations as unknown[]).push(1);
    expect(part.annotations).toEqual([]);
    const reasoning = { type: 'reasoning', summary: [{ type: 'summary_text', text: 'x' }] };
    const copy = copyRecord(reasoning);
    expect(copy).toEqual(reasoning);
    expect((copy.summary as unknown[])[0]).not.toBe(reasoning.summary[0]);
  });
});

describe('mergeRecord', () => {
  it('lets the authoritative record win and keeps unknown fields of both sides', () => {
    const built = { type: 'function_call', arguments: '{"a"', status: 'in_progress', x_built: 1 };
    const next = { arguments: '{"a":1}', status: 'completed', x_signature: 'sig' };
    expect(mergeRecord(built, next)).toEqual({
      type: 'function_call',
      arguments: '{"a":1}',
      status: 'completed',
      x_built: 1,
      x_signature: 'sig',
    });
  });

  it('never erases: a missing, null or empty value and a shorter array keep the built value', () => {
    const built = { text: 'built', error: { code: 'x' }, content: [1, 2], id: 'a' };
    expect(mergeRecord(built, { text: '', error: null, content: [1], id: undefined })).toEqual(built);
  });

  it('takes a value where nothing was built, and copies the arrays it takes', () => {
    const content = [{ type: 'output_text', text: 't', annotations: [] }];
    const merged = mergeRecord({ text: '' }, { text: 'now', content });
    expect(merged).toEqual({ text: 'now', content });
    expect((merged.content as unknown[])[0]).not.toBe(content[0]);
  });
});

describe('indexes and text', () => {
  it('isIndex accepts non-negative integers only', () => {
    expect([0, 3, 1e6].every(isIndex)).toBe(true);
    expect([-1, 1.5, '1', Number.NaN, undefined].some(isIndex)).toBe(false);
  });

  it('isSlot refuses an index far past the end of a list', () => {
    expect(isSlot([], MAX_INDEX_GAP)).toBe(true);
    expect(isSlot([], MAX_INDEX_GAP + 1)).toBe(false);
    expect(isSlot([1, 2], MAX_INDEX_GAP + 2)).toBe(true);
  });

  it('doneText: the done value wins unless it is empty', () => {
    expect(doneText('Helo', 'Hello')).toBe('Hello');
    expect(doneText('built', '')).toBe('built');
  });

  it('shownText reads a part, a message and a reasoning item alike', () => {
    expect(shownText({ type: 'output_text', text: 'a' })).toBe('a');
    expect(shownText({ type: 'message', content: [{ text: 'a' }, { refusal: 'r' }, { text: 'b' }] })).toBe('a\u0000b\u0000');
    expect(shownText({ type: 'reasoning', summary: [{ text: 's' }] })).toBe('s\u0000');
    expect(shownText({ type: 'reasoning', summary: [{ text: 's' }], content: [{ text: 'r' }] })).toBe('s\u0000\u0001r\u0000');
    expect(shownText(null)).toBe('');
  });

  it('outputTextOf joins the output_text parts of the messages only', () => {
    const output: OutputItem[] = [
      { type: 'reasoning', id: 'rs', summary: [{ type: 'summary_text', text: 'no' }] },
      {
        type: 'message',
        id: 'm',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Hello', annotations: [] },
          { type: 'refusal', refusal: 'no' },
          { type: 'output_text', text: ' world', annotations: [] },
        ],
      },
    ];
    expect(outputTextOf(output)).toBe('Hello world');
  });
});

describe('guards and placeholders', () => {
  it('isOutputItem checks the fields the listener reads, and keeps item types it does not know', () => {
    expect(isOutputItem({ type: 'message', content: [] })).toBe(true);
    expect(isOutputItem({ type: 'message', content: 'text' })).toBe(false);
    expect(isOutputItem({ type: 'message', content: [null] })).toBe(false);
    expect(isOutputItem({ type: 'function_call', call_id: 'c', name: 'f', arguments: '' })).toBe(true);
    expect(isOutputItem({ type: 'function_call', call_id: 'c', name: 'f' })).toBe(false);
    expect(isOutputItem({ type: 'reasoning', summary: [], content: 'x' })).toBe(false);
    expect(isOutputItem({ type: 'custom_tool_call', call_id: 'c', name: 'sql', input: '' })).toBe(true);
    expect(isOutputItem({ type: 'hologram_call', id: 'h' })).toBe(true);
    expect(isOutputItem({ id: 'no type' })).toBe(false);
  });

  it('isMessagePart accepts output_text with annotations and refusals', () => {
    expect(isMessagePart({ type: 'output_text', text: '', annotations: [] })).toBe(true);
    expect(isMessagePart({ type: 'output_text', text: 1, annotations: [] })).toBe(false);
    expect(isMessagePart({ type: 'refusal', refusal: 'no' })).toBe(true);
    expect(isMessagePart({ type: 'refusal' })).toBe(false);
  });

  it('placeholders are valid items of their type', () => {
    for (const type of ['message', 'reasoning', 'function_call', 'custom_tool_call'] as const) {
      const item = placeholder(type, 'id_1');
      expect(item.type).toBe(type);
      expect(isOutputItem(item)).toBe(true);
    }
    expect(placeholder('function_call', 'fc_1')).toMatchObject({ call_id: 'fc_1', arguments: '' });
  });
});
