import { type ChatCompletion, ChatStreamListener, type ChatStreamListenerOptions, type RefusalEvent } from '@ai4ts/chat';
import type { StreamEvent } from '@ai4ts/core';

/** What the listener tests record: the normalized stream events and chat's refusal. */
export type ChatStreamEvent = StreamEvent | RefusalEvent;

const BASE = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'test-model' };

/** A chunk with one choice (index 0 unless `extra.index` says otherwise). */
export function chunk(delta: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...BASE, choices: [{ index: 0, delta, finish_reason: null, ...extra }] };
}

/** The finish chunk of choice `index`. */
export function finish(reason: string, index = 0, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...BASE, choices: [{ index, delta: {}, finish_reason: reason, ...extra }] };
}

/** A tool-call fragment chunk. */
export function toolChunk(...fragments: Record<string, unknown>[]): Record<string, unknown> {
  return chunk({ tool_calls: fragments });
}

/**
 * Pushes every chunk into a fresh listener, recording all events (chunk events left out), then calls `end()`
 * unless `end: false`: `result` is what it returned, `error` what it threw.
 */
export function run(
  chunks: unknown[],
  options: ChatStreamListenerOptions & { end?: boolean } = {},
): { listener: ChatStreamListener; events: ChatStreamEvent[]; result?: ChatCompletion; error?: unknown } {
  // Read as a server that never sends [DONE] would be: these tests are about merging; the [DONE] rule has its own.
  const listener = new ChatStreamListener({ finishOnEnd: true, ...options });
  const events: ChatStreamEvent[] = [];
  for (const name of [
    'content',
    'reasoning',
    'refusal',
    'tool_call.start',
    'tool_call.delta',
    'tool_call.done',
    'usage',
    'finish',
  ] as const) {
    listener.on(name, (event: ChatStreamEvent) => events.push(event));
  }
  for (const c of chunks) listener.push(c);
  if (options.end === false) return { listener, events };
  try {
    return { listener, events, result: listener.end() };
  } catch (error) {
    return { listener, events, error };
  }
}

/** Events of one type. */
export function ofType<T extends ChatStreamEvent['type']>(
  events: ChatStreamEvent[],
  type: T,
): Extract<ChatStreamEvent, { type: T }>[] {
  return events.filter((e): e is Extract<ChatStreamEvent, { type: T }> => e.type === type);
}
