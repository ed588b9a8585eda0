import { SseDecoder } from './decoder.js';
import type { SseEvent } from './event.js';
import { SseError } from './errors.js';

/** What {@link parseSse} reads: a fetch Response, a web stream or any async iterable of bytes or text. */
export type SseSource =
  | Response
  | ReadableStream<Uint8Array>
  | ReadableStream<string>
  | AsyncIterable<Uint8Array | string>;

/** Options of {@link parseSse}. */
export interface ParseSseOptions {
  /** Aborting stops the iteration with the signal's reason and cancels the source. */
  signal?: AbortSignal;
  /** See {@link SseDecoderOptions.maxEventSize}. */
  maxEventSize?: number;
}

/** The events of one stream; iterate it once. */
export interface SseEventStream extends AsyncIterable<SseEvent> {
  /** Read after the iteration ended: true when the input stopped inside a block, which was discarded. */
  readonly incomplete: boolean;
}

/**
 * Decodes a stream of server-sent events.
 *
 * The source is released however the iteration ends: a body or reader is cancelled, an async iterable is
 * `return()`ed, when the consumer stops early (break, throw), when decoding fails (`SseError`), or when the signal
 * aborts; an abort rejects with `signal.reason` (a DOMException named "AbortError" unless the caller gave a reason).
 */
export function parseSse(source: SseSource, options: ParseSseOptions = {}): SseEventStream {
  const decoder = new SseDecoder({ maxEventSize: options.maxEventSize });
  const events = readEvents(source, decoder, options.signal);
  return {
    [Symbol.asyncIterator]: () => events,
    get incomplete() {
      return decoder.incomplete;
    },
  };
}

/** Reads `source` through `decoder` (ending it at EOF) and releases the source however the reading stops. */
export async function* readEvents(
  source: SseSource,
  decoder: SseDecoder,
  signal: AbortSignal | undefined,
): AsyncGenerator<SseEvent, void, undefined> {
  const chunks = open(source);
  let finished = false;
  let onAbort: (() => void) | undefined;
  const aborted =
    signal &&
    new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  aborted?.catch(noop);
  try {
    while (true) {
      signal?.throwIfAborted();
      let read = chunks.next();
      if (aborted) {
        read.catch(noop); // a read left behind by an abort may still fail
        read = Promise.race([read, aborted]);
      }
      const result = await read;
      if (result.done) break;
      for (const event of decode(() => decoder.push(result.value))) yield event;
    }
    finished = true;
    for (const event of decode(() => decoder.end())) yield event;
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    if (finished) chunks.release();
    else chunks.cancel(signal?.reason);
  }
}

/** The events of one decoder call; on `event_too_large`, the events completed before the oversized block first. */
function* decode(call: () => SseEvent[]): Generator<SseEvent, void, undefined> {
  let events: SseEvent[];
  try {
    events = call();
  } catch (error) {
    if (error instanceof SseError && error.partial) yield* error.partial;
    throw error;
  }
  yield* events;
}

interface Chunks {
  next(): Promise<IteratorResult<Uint8Array | string>>;
  /** Stops the source early. */
  cancel(reason: unknown): void;
  /** Lets go of a source that ended. */
  release(): void;
}

function open(source: SseSource): Chunks {
  if (!isReadableStream(source) && Symbol.asyncIterator in source) {
    const iterator = source[Symbol.asyncIterator]();
    return {
      next: () => iterator.next(),
      cancel: () => void Promise.resolve(iterator.return?.()).catch(noop),
      release: noop,
    };
  }
  const stream = isReadableStream(source) ? source : source.body;
  if (!stream) return { next: async () => ({ done: true, value: undefined }), cancel: noop, release: noop };
  const reader = stream.getReader();
  return {
    next: () => reader.read(),
    cancel: (reason) => {
      // Not awaited: some bodies (mocked ones) never settle a cancel, and the caller must not hang on it.
      reader.cancel(reason).catch(noop);
      reader.releaseLock();
    },
    release: () => reader.releaseLock(),
  };
}

function isReadableStream(source: SseSource): source is ReadableStream<Uint8Array> | ReadableStream<string> {
  return 'getReader' in source && typeof source.getReader === 'function';
}

function noop(): void {}
