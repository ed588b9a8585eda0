import { checkRequest } from '@ai4ts/core/internal';
import { describe, expect, it } from 'vitest';
import { ChatCompletionCreateParamsSchema } from '../src/types.js';

/** The boundary check's message for a request, or undefined when it passes. */
function problems(request: unknown): string | undefined {
  try {
    checkRequest(ChatCompletionCreateParamsSchema, request, 'chat');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };

describe('ChatCompletionCreateParamsSchema', () => {
  it('passes every role in its wire form, provider fields included', () => {
    const messages = [
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }], name: 'ann' },
      { role: 'assistant', content: null, tool_calls: [call], reasoning_content: 'kept' },
      { role: 'tool', content: '{"ok":true}', tool_call_id: 'c1' },
    ];
    expect(problems({ model: 'm', messages, n: 2, tools: [{ type: 'custom', custom: { name: 'x' } }] })).toBeUndefined();
  });

  it('names each problem in English, with its path', () => {
    expect(problems({ model: '', messages: [] })).toBe(
      'Invalid chat request:\n' +
        '✖ Too small: expected string to have >=1 characters\n  → at model\n' +
        '✖ Too small: expected array to have >=1 items\n  → at messages',
    );
    expect(problems({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] })).toContain(
      '✖ Invalid option: expected one of "system"|"developer"|"user"|"assistant"|"tool"\n  → at messages[0].role',
    );
    expect(problems({ model: 7, messages: [{ role: 'user', content: 'x' }] })).toContain(
      '✖ Invalid input: expected string, received number\n  → at model',
    );
  });

  it('keeps the per-role rules: content outside assistant turns, tool_call_id on tool results, well-formed calls', () => {
    expect(problems({ model: 'm', messages: [{ role: 'user' }] })).toContain('→ at messages[0].content');
    expect(problems({ model: 'm', messages: [{ role: 'assistant' }] })).toBeUndefined();
    expect(problems({ model: 'm', messages: [{ role: 'tool', content: 'x' }] })).toContain('→ at messages[0].tool_call_id');
    const badCall = { ...call, type: 'tool' };
    expect(problems({ model: 'm', messages: [{ role: 'assistant', tool_calls: [badCall] }] })).toContain(
      '✖ Invalid input: expected "function"\n  → at messages[0].tool_calls[0].type',
    );
  });

  it('n is a positive integer; tools are in wire form', () => {
    const messages = [{ role: 'user', content: 'x' }];
    for (const n of [0, 1.5, -1, '2']) expect(problems({ model: 'm', messages, n })).toContain('→ at n');
    expect(problems({ model: 'm', messages, n: null })).toBeUndefined();
    expect(problems({ model: 'm', messages, tools: [{ name: 'f' }] })).toContain('A tool must be in wire form');
  });
});
