/**
 * `POST /messages` over a Transport: one-shot `create`, live `stream`, and {@link streamMessage}, the single
 * streamed step the tool loop wraps.
 */
import { Ai4tsError, type NormalizedEvent, ProtocolError, type RequestOptions, type Transport } from '@ai4ts/core';
import type { SseEvent } from '@ai4ts/sse';
import { z } from 'zod';
import { collectMessage, fromSource, readMessageEvents } from './collect.js';
import { type MessagesListenerEvents, MessagesStreamListener } from './listener.js';
import type { Message, MessageCreateParams } from './types.js';

/** The endpoint, under an Anthropic baseURL such as `https://api.anthropic.com/v1`. */
export const MESSAGES_PATH = '/messages';

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

function checkRequest(request: MessageCreateParams): void {
  const result = requestSchema.safeParse(request);
  if (!result.success) throw new Ai4tsError(`Invalid Messages request:\n${z.prettifyError(result.error)}`);
}

/** Options of {@link streamMessage}: the per-call request options and the listener to fold the events into. */
export interface StreamMessageOptions extends RequestOptions {
  listener?: MessagesStreamListener;
}

/**
 * Runs one streamed Messages request and resolves to the final message; the listener (a fresh one by default)
 * sees every event live. This is the step the tool loop repeats. Every failure rejects with a typed error from
 * @ai4ts/core whose `partial` is the message so far (null when the stream never started).
 */
export async function streamMessage(
  transport: Transport,
  request: MessageCreateParams,
  options: StreamMessageOptions = {},
): Promise<Message> {
  const { listener = new MessagesStreamListener(), ...requestOptions } = options;
  let events: AsyncIterable<SseEvent>;
  try {
    checkRequest(request);
    events = await transport.stream(MESSAGES_PATH, { body: { ...request, stream: true }, options: requestOptions });
  } catch (error) {
    throw listener.fail(fromSource(error, requestOptions.signal));
  }
  return readMessageEvents(events, listener, requestOptions.signal);
}

/** The Messages API: `create` for the whole message, `stream` to watch it arrive. */
export class MessagesService {
  /** Give it a Transport for an Anthropic-style API, e.g. `new Transport({ provider: 'anthropic' })`. */
  constructor(readonly transport: Transport) {}

  /**
   * Sends a non-streaming request and resolves to the message. A server that answers with SSE anyway is
   * collected transparently, with the same errors as {@link collectMessage}.
   */
  async create(request: MessageCreateParams, options: RequestOptions = {}): Promise<Message> {
    checkRequest(request);
    const response = await this.transport.request(MESSAGES_PATH, {
      method: 'POST',
      body: { ...request, stream: false },
      options,
    });
    if (response.headers.get('content-type')?.includes('text/event-stream')) {
      return collectMessage(response, { signal: options.signal });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw fromSource(error, options.signal);
    }
    try {
      return JSON.parse(text) as Message;
    } catch (cause) {
      throw new ProtocolError('The response body is not JSON', { cause, line: text });
    }
  }

  /** Starts a streaming request now and returns its {@link MessageStream}. */
  stream(request: MessageCreateParams, options: RequestOptions = {}): MessageStream {
    return new MessageStream(
      (listener, signal) => streamMessage(this.transport, request, { ...options, signal, listener }),
      options.signal,
    );
  }
}

/** The normalized events a {@link MessageStream} yields (errors are thrown, not yielded). */
export type MessageStreamItem = Exclude<NormalizedEvent, { type: 'error' | 'tool.result' }>;

const YIELDED = [
  'content',
  'reasoning',
  'tool_call.start',
  'tool_call.delta',
  'tool_call.done',
  'usage',
  'finish',
] as const;

/**
 * A running Messages stream. It starts when created and buffers its normalized events until they are read, so
 * `final()` alone is enough and iterating late loses nothing. Iterate it (once) for the normalized events, listen
 * with `on` for those and the raw `event`, read `listener` for the state. Breaking out of the loop aborts the
 * request. A failure rejects `final()` and throws from the loop; it is never an unhandled rejection.
 */
export class MessageStream implements AsyncIterable<MessageStreamItem> {
  /** The state: message, text, thinking, toolUses, usage, status, events. */
  readonly listener = new MessagesStreamListener();
  readonly #controller = new AbortController();
  readonly #result: Promise<Message>;
  #queue: MessageStreamItem[] = [];
  #read = 0;
  #settled = false;
  #wake: (() => void) | undefined;
  #iterated = false;

  /** `run` performs the request with the stream's listener and abort signal (see {@link streamMessage}). */
  constructor(run: (listener: MessagesStreamListener, signal: AbortSignal) => Promise<Message>, signal?: AbortSignal) {
    const push = (event: MessageStreamItem) => {
      this.#queue.push(event);
      this.#wake?.();
    };
    for (const name of YIELDED) this.listener.on(name, push);
    const combined = signal ? AbortSignal.any([signal, this.#controller.signal]) : this.#controller.signal;
    this.#result = run(this.listener, combined);
    const settle = () => {
      this.#settled = true;
      this.#wake?.();
    };
    this.#result.then(settle, settle);
  }

  /** Resolves to the complete message; rejects with the typed error (its `partial` holds what arrived). */
  final(): Promise<Message> {
    return this.#result;
  }

  /** Stops the request; `final()` rejects with AbortError unless the message already completed. */
  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  /** Adds a listener for a normalized event, the raw `event`, `message` or `error`. */
  on<E extends keyof MessagesListenerEvents>(event: E, fn: MessagesListenerEvents[E]): this {
    this.listener.on(event, fn as never);
    return this;
  }

  /** Removes a listener added with {@link on}. */
  off<E extends keyof MessagesListenerEvents>(event: E, fn: MessagesListenerEvents[E]): this {
    this.listener.off(event, fn as never);
    return this;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<MessageStreamItem> {
    if (this.#iterated) throw new Ai4tsError('A MessageStream can be iterated only once');
    this.#iterated = true;
    try {
      while (true) {
        if (this.#read < this.#queue.length) {
          const event = this.#queue[this.#read++] as MessageStreamItem;
          if (this.#read === this.#queue.length) {
            this.#queue = [];
            this.#read = 0;
          }
          yield event;
        } else if (this.#settled) break;
        else await new Promise<void>((resolve) => (this.#wake = resolve));
      }
      await this.#result;
    } finally {
      this.#wake = undefined;
      if (!this.#settled) this.abort();
    }
  }
}
