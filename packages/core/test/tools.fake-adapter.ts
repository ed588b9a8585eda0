/**
 * An in-memory chat-like protocol for the tool-loop tests: no HTTP, a scripted model, and an adapter written the
 * way a real protocol package writes one.
 */
import {
  AbortError,
  type NormalizedEvent,
  type ToolLoopAdapter,
  type ToolResult,
  type Usage,
} from '@ai4ts/core';

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type Message =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[]; reasoning_content?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface FakeRequest {
  model: string;
  messages: Message[];
  parallel_tool_calls?: boolean;
  temperature?: number;
}

export interface FakeCompletion {
  message: Extract<Message, { role: 'assistant' }>;
  finish_reason: string;
  usage?: Usage;
}

/** One scripted model turn. */
export interface FakeTurn {
  content?: string;
  /** [id, name, arguments] */
  calls?: [string, string, string][];
  finish?: string;
  usage?: Usage;
  /** Resolve the request only when this promise settles (to hold a step open). */
  wait?: Promise<unknown>;
}

export interface FakeModel {
  adapter: ToolLoopAdapter<FakeRequest, FakeCompletion, Message>;
  /** Every request the model received, deep-copied at send time. */
  requests: FakeRequest[];
}

/** A model that answers request N with `turns(request, N)`. */
export function fakeModel(turns: (request: FakeRequest, step: number) => FakeTurn): FakeModel {
  const requests: FakeRequest[] = [];
  const adapter: ToolLoopAdapter<FakeRequest, FakeCompletion, Message> = {
    async send(request, { signal, emit }) {
      requests.push(structuredClone(request));
      const turn = turns(request, requests.length);
      if (turn.wait) {
        await new Promise((resolve, reject) => {
          signal.addEventListener('abort', () => reject(new AbortError('aborted', { cause: signal.reason })));
          turn.wait?.then(resolve, reject);
        });
      }
      const calls = (turn.calls ?? []).map(
        ([id, name, args]): WireToolCall => ({ id, type: 'function', function: { name, arguments: args } }),
      );
      const completion: FakeCompletion = {
        message: {
          role: 'assistant',
          content: turn.content ?? null,
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        finish_reason: turn.finish ?? (calls.length ? 'tool_calls' : 'stop'),
        ...(turn.usage ? { usage: turn.usage } : {}),
      };
      if (emit) for (const event of eventsOf(completion)) emit(event);
      return completion;
    },
    readTurn: (completion) => ({
      toolCalls: (completion.message.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      })),
      finishReason: completion.finish_reason,
      text: completion.message.content ?? '',
      usage: completion.usage,
    }),
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    assistantMessages: (completion) => [completion.message],
    toolMessages: (results: readonly ToolResult[]) =>
      results.map((result) => ({ role: 'tool', tool_call_id: result.toolCallId, content: result.content })),
    parallelToolCalls: (request) => request.parallel_tool_calls !== false,
  };
  return { adapter, requests };
}

/** The normalized events a streaming listener would have emitted for a completion. */
function eventsOf(completion: FakeCompletion): NormalizedEvent[] {
  const events: NormalizedEvent[] = [];
  let snapshot = '';
  for (const delta of (completion.message.content ?? '').match(/.{1,4}/gs) ?? []) {
    snapshot += delta;
    events.push({ type: 'content', delta, snapshot, choice: 0 });
  }
  for (const [index, call] of (completion.message.tool_calls ?? []).entries()) {
    events.push({ type: 'tool_call.start', index, id: call.id, name: call.function.name, choice: 0 });
    events.push({ type: 'tool_call.delta', index, id: call.id, delta: call.function.arguments, choice: 0 });
    const args = call.function.arguments;
    events.push({ type: 'tool_call.done', index, id: call.id, name: call.function.name, arguments: args, choice: 0 });
  }
  if (completion.usage) events.push({ type: 'usage', usage: completion.usage, raw: completion.usage });
  events.push({ type: 'finish', finishReason: completion.finish_reason, choice: 0 });
  return events;
}

/** A promise with its resolve function outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Freezes an object graph, so any mutation throws in strict mode. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

export const usage = (prompt: number, completion: number, reasoning?: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  ...(reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: reasoning } }),
});
