/**
 * ChatStream: one streaming Chat Completions request, readable four ways (async iteration of events, an emitter,
 * the listener's live state, `.final()`), plus re-encoding as SSE bytes for a downstream client.
 */
import { type Ai4tsError, ApiError } from '@ai4ts/core';
import { encodeSse } from '@ai4ts/sse';
import {
  CHAT_STREAM_EVENT_NAMES,
  type ChatStreamEvent,
  type ChatStreamEvents,
  ChatStreamListener,
  type ChatStreamListenerOptions,
  type ChunkEvent,
} from './listener.js';
import type { ChatCompletion } from './types.js';

/** Runs the request: feeds `listener` and resolves to the completion (or rejects with `.partial` set). */
export type ChatStreamRunner = (listener: ChatStreamListener, signal: AbortSignal) => Promise<ChatCompletion>;

export interface ChatStreamInit extends ChatStreamListenerOptions {
  /** The caller's signal; `abort()` works as well. */
  signal?: AbortSignal | undefined;
}

/**
 * A streaming chat request in flight. It starts when created, whether or not anyone reads it, and an un-awaited
 * failure never becomes an unhandled rejection. Events are not replayed: iterate, subscribe or call
 * `toReadableStream()` right away (in the same tick as `stream()`); `.listener` and `.final()` see everything.
 *
 * ```ts
 * const stream = chat.stream({ model, messages });
 * for await (const event of stream) if (event.type === 'content') process.stdout.write(event.delta);
 * const completion = await stream.final();
 * ```
 */
export class ChatStream implements AsyncIterable<ChatStreamEvent> {
  /** The merged state, readable at any moment (`content`, `reasoning`, `toolCalls`, `status`, ...). */
  readonly listener: ChatStreamListener;
  readonly #controller = new AbortController();
  readonly #result: Promise<ChatCompletion>;
  #settled = false;

  constructor(run: ChatStreamRunner, init: ChatStreamInit = {}) {
    this.listener = new ChatStreamListener(init);
    const signal = init.signal ? AbortSignal.any([init.signal, this.#controller.signal]) : this.#controller.signal;
    this.#result = run(this.listener, signal);
    const settle = () => {
      this.#settled = true;
    };
    // Handles the rejection here, so a caller that never awaits .final() sees no unhandled rejection.
    this.#result.then(settle, settle);
  }

  /** The final completion; rejects with the typed error (`.partial` holds what arrived). */
  final(): Promise<ChatCompletion> {
    return this.#result;
  }

  /** Stops the request and releases the connection; `.final()` rejects with AbortError. No-op once finished. */
  abort(): void {
    if (!this.#settled) this.#controller.abort();
  }

  /** Subscribes to an event (the listener's events). */
  on<E extends keyof ChatStreamEvents>(event: E, handler: ChatStreamEvents[E]): this {
    this.listener.on(event, handler as never);
    return this;
  }

  /** Subscribes to one occurrence of an event. */
  once<E extends keyof ChatStreamEvents>(event: E, handler: ChatStreamEvents[E]): this {
    this.listener.once(event, handler as never);
    return this;
  }

  /** Unsubscribes. */
  off<E extends keyof ChatStreamEvents>(event: E, handler?: ChatStreamEvents[E]): this {
    this.listener.off(event, handler as never);
    return this;
  }

  /**
   * Events from now on, until the stream ends; a failure is thrown from the loop. Leaving the loop early
   * (break, return, throw) aborts the request, unless every choice has already finished.
   */
  [Symbol.asyncIterator](): AsyncIterator<ChatStreamEvent> {
    const queue: ChatStreamEvent[] = [];
    let head = 0;
    let wake: (() => void) | undefined;
    let finished = false;
    let failure: unknown;
    const onEvent = (event: ChatStreamEvent) => {
      queue.push(event);
      wake?.();
    };
    const detach = () => {
      for (const name of CHAT_STREAM_EVENT_NAMES) this.listener.off(name, onEvent);
    };
    for (const name of CHAT_STREAM_EVENT_NAMES) this.listener.on(name, onEvent);
    this.#result.then(
      () => {
        finished = true;
        wake?.();
      },
      (error: unknown) => {
        finished = true;
        failure = error;
        wake?.();
      },
    );
    return {
      next: async (): Promise<IteratorResult<ChatStreamEvent>> => {
        for (;;) {
          if (head < queue.length) {
            const value = queue[head++] as ChatStreamEvent;
            if (head === queue.length) queue.length = head = 0;
            return { value, done: false };
          }
          if (finished) {
            detach();
            if (failure !== undefined) throw failure;
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
        }
      },
      return: async (): Promise<IteratorResult<ChatStreamEvent>> => {
        detach();
        // After every finish_reason only the usage chunk and [DONE] remain: let them arrive so .final() succeeds.
        if (this.listener.status !== 'complete') this.abort();
        return { value: undefined, done: true };
      },
    };
  }

  /**
   * The stream re-encoded as SSE bytes in Chat Completions' own format: one `data: <chunk JSON>` event per chunk,
   * then `data: [DONE]`; a failure becomes a final `event: error` frame `{code?, message}`. What a server hands to
   * its own client; `collectChatCompletion()` reads it back. Cancelling the readable aborts the request.
   */
  toReadableStream(): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    let onChunk: ((event: ChunkEvent) => void) | undefined;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        onChunk = (event) => controller.enqueue(encoder.encode(encodeSse({ data: JSON.stringify(event.chunk) })));
        this.listener.on('chunk', onChunk);
        const close = (frame: string) => {
          if (!onChunk) return; // cancelled
          this.listener.off('chunk', onChunk);
          onChunk = undefined;
          controller.enqueue(encoder.encode(frame));
          controller.close();
        };
        this.#result.then(
          () => close(encodeSse({ data: '[DONE]' })),
          (error: Ai4tsError) => close(encodeSse({ event: 'error', data: JSON.stringify(errorFrame(error)) })),
        );
      },
      cancel: () => {
        if (onChunk) this.listener.off('chunk', onChunk);
        onChunk = undefined;
        this.abort();
      },
    });
  }
}

function errorFrame(error: Ai4tsError): { code?: string; message: string } {
  const code = error instanceof ApiError ? error.code : error.name;
  return code === undefined ? { message: error.message } : { code, message: error.message };
}
