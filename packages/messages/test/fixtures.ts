/**
 * Messages streams shaped like the real API (event names, field order and values as Anthropic sends them).
 */
type Event = { type: string; [key: string]: unknown };

export const MODEL = 'claude-sonnet-4-5-20250929';

export function messageStart(
  usage: Record<string, unknown> = { input_tokens: 472, output_tokens: 2 },
  id = 'msg_01XFDUDYJgAACzvnptvVoYEL',
): Event {
  return {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage, service_tier: 'standard' },
    },
  };
}

export const ping: Event = { type: 'ping' };

export function blockStart(index: number, content_block: Record<string, unknown>): Event {
  return { type: 'content_block_start', index, content_block };
}

export function delta(index: number, d: Record<string, unknown>): Event {
  return { type: 'content_block_delta', index, delta: d };
}

export function blockStop(index: number): Event {
  return { type: 'content_block_stop', index };
}

/** A whole text block streamed as the given fragments. */
export function textBlock(index: number, ...parts: string[]): Event[] {
  return [
    blockStart(index, { type: 'text', text: '' }),
    ...parts.map((text) => delta(index, { type: 'text_delta', text })),
    blockStop(index),
  ];
}

/** A whole thinking block: empty start signature, thinking fragments, then the signature_delta. */
export function thinkingBlock(index: number, signature: string, ...parts: string[]): Event[] {
  return [
    blockStart(index, { type: 'thinking', thinking: '', signature: '' }),
    ...parts.map((thinking) => delta(index, { type: 'thinking_delta', thinking })),
    delta(index, { type: 'signature_delta', signature }),
    blockStop(index),
  ];
}

/** A tool_use block: empty input at start, then the input JSON in the given fragments (the API's first one is ""). */
export function toolUseBlock(index: number, id: string, name: string, ...json: string[]): Event[] {
  return [
    blockStart(index, { type: 'tool_use', id, name, input: {} }),
    ...['', ...json].map((partial_json) => delta(index, { type: 'input_json_delta', partial_json })),
    blockStop(index),
  ];
}

export function messageDelta(stop_reason: string, usage: Record<string, unknown> = { output_tokens: 15 }): Event {
  return { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage };
}

export const messageStop: Event = { type: 'message_stop' };

export function overloaded(): Event {
  return { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
}

/** A complete text answer: "Hello!" in two fragments, with a ping. */
export function helloStream(): Event[] {
  return [
    messageStart(),
    blockStart(0, { type: 'text', text: '' }),
    ping,
    delta(0, { type: 'text_delta', text: 'Hello' }),
    delta(0, { type: 'text_delta', text: '!' }),
    blockStop(0),
    messageDelta('end_turn'),
    messageStop,
  ];
}

/** Thinking, text, then a tool_use whose input is split inside a string escape. */
export function thinkingTextToolStream(): Event[] {
  return [
    messageStart(),
    ...thinkingBlock(0, 'EqQBCkgIARABGAIiQL2', 'The user wants ', 'the weather.'),
    ...textBlock(1, 'Let me check ', 'that.'),
    ...toolUseBlock(
      2,
      'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      'get_weather',
      '{"location": "San Fr',
      'ancisco, CA \\',
      '"the city\\"", "unit": "fahrenheit"}',
    ),
    messageDelta('tool_use', { output_tokens: 89 }),
    messageStop,
  ];
}
