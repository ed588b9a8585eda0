/**
 * One streamed Messages request: the {@link MessageStream} handle and {@link streamMessage}, the single streamed
 * step the service and the tool loop both use.
 */
import {
  Ai4tsError,
  EventStream,
  readInto,
  STREAM_EVENT_NAMES,
  type StreamEvent,
  type Transport,
  toAnthropicTool,
} from '@ai4ts/core';
import { toAi4tsError, toWireBody } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { z } from 'zod';
import { type MessageStreamEvents, MessageStreamListener } from './listener.js';
import { MESSAGES_PATH, type Message, type MessageCreateParams, type MessageRequestOptions } from './types.js';

/** Runs the request: feeds `listener` and resolves to the message (or rejects with the listener's error). */
export type MessageStreamRunner = (listener: MessageStreamListener, signal: AbortSignal) => Promise<Message>;

/**
 * A streaming Messages request in flight, with the rules of every {@link EventStream}: it starts when created and
 * buffers its events from the first, every `for await` yields them all (the normalized {@link StreamEvent}s:
 * content, reasoning, tool calls, usage, finish), leaving a loop early aborts a running request, and `final()`
 * resolves to the message or rejects with the typed error (`partial`: the message so far, null when the stream
 * never started). The raw `event`, `message` and `error` come through `on()`; `listener` holds the state at any
 * moment (message, text, thinking, toolUses, usage, status, events).
 */
export class MessageStream extends EventStream<StreamEvent, Message, MessageStreamEvents> {
  /** The state of the stream. */
  readonly listener: MessageStreamListener;

  /** `run` performs the request with the stream's listener and abort signal; `signal` is the caller's. */
  constructor(run: MessageStreamRunner, signal?: AbortSignal) {
    const listener = new MessageStreamListener();
    super(
      (push, combined) => {
        for (const name of STREAM_EVENT_NAMES) listener.on(name, push);
        return run(listener, combined);
      },
      listener,
      signal,
    );
    this.listener = listener;
  }
}

/**
 * Sends one streaming request and returns its {@link MessageStream}, already running. The body is
 * {@link toWireRequest}'s plus `stream: true`.
 *
 * @throws Ai4tsError synchronously for an invalid request. Every later failure rejects `final()` (see
 *   {@link MessageStream}); an HTTP error is the Transport's typed ApiError, its `partial` null.
 */
export function streamMessage(
  transport: Transport,
  request: MessageCreateParams,
  options: MessageRequestOptions = {},
): MessageStream {
  return streamWireBody(transport, toWireRequest(request), options);
}

/** {@link streamMessage} for a body already built by {@link toWireRequest} (the tool loop's). Not public. */
export function streamWireBody(
  transport: Transport,
  wire: Record<string, unknown>,
  options: MessageRequestOptions,
): MessageStream {
  const body = { ...wire, stream: true };
  const { signal: callerSignal, ...requestOptions } = options;
  return new MessageStream(async (listener, signal) => {
    let events: AsyncIterable<SseEvent>;
    try {
      events = await transport.stream(MESSAGES_PATH, { body, options: { ...requestOptions, signal } });
    } catch (error) {
      throw listener.fail(toAi4tsError(error, { signal }));
    }
    return readInto(events, listener, signal);
  }, callerSignal);
}

/** The request fields every call needs; the rest passes through to the API, which checks it. */
const requestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(
    z.looseObject({
      role: z.enum(['user', 'assistant']),
      content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
    }),
  ),
});

/**
 * The request as the API receives it (without `stream`, which the service sets), built by core's `toWireBody`:
 * loop fields, `undefined` values and an empty `tools` array left off, tools made by `defineTool` converted with
 * `toAnthropicTool`, every other field kept. Never mutates `request`. Takes a plain request or a tool-loop request.
 *
 * @throws Ai4tsError (synchronously, no `partial`) when `model`, `max_tokens` or `messages` are missing or invalid.
 */
export function toWireRequest(
  request: Omit<MessageCreateParams, 'tools'> & { readonly tools?: readonly unknown[] | undefined },
): Record<string, unknown> {
  const body = toWireBody(request, toAnthropicTool);
  const checked = requestSchema.safeParse(body);
  if (!checked.success) {
    throw new Ai4tsError(`Invalid Messages request:\n${z.prettifyError(checked.error)}`, { cause: checked.error });
  }
  return body;
}
