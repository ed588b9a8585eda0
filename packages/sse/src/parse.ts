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

/** The events of one stream; iterate it (or its {@link SseEventStream.batches}) once. */
export interface SseEventStream extends AsyncIterable<SseEvent> {
  /** Read after the iteration ended: true when the input stopped inside a block, which was discarded. */
  readonly incomplete: boolean;
  /**
   * The same events, one array per input chunk that completed any (never an empty one): one `await` per chunk
   * instead of one per event, for readers that handle each event synchronously.
   */
  batches(): AsyncIterableIterator<SseEvent[]>;
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
  const batches = readBatches(source, decoder, options.signal, ssePartial);
  return {
    [Symbol.asyncIterator]: () => flatten(batches),
    batches: () => batches,
    get incomplete() {
      return decoder.incomplete;
    },
  };
}

/** Reads `source` through `decoder` (ending it at EOF) and releases the source however the reading stops. */
export function readEvents(
  source: SseSource,
  decoder: SseDecoder,
  signal: AbortSignal | undefined,
): AsyncGenerator<SseEvent, void, undefined> {
  return flatten(readBatches(source, decoder, signal, ssePartial));
}

/** On `event_too_large`, the events the chunk completed before the oversized block. */
function ssePartial(error: unknown): SseEvent[] | undefined {
  return error instanceof SseError ? error.partial : undefined;
}

export async function* flatten<T>(batches: AsyncIterator<T[]>): AsyncGenerator<T, void, undefined> {
  try {
    for (let next = await batches.next(); !next.done; next = await batches.next()) yield* next.value;
  } finally {
    await batches.return?.();
  }
}

/** A push decoder of either framing: what each chunk completes, and what the end completes. */
export interface PushDecoder<C, T> {
  push(chunk: C): T[];
  end(): T[];
}

/** What a push decoder reads: a fetch Response, a web stream or any async iterable of its chunks. */
export type ChunkSource<C> = Response | ReadableStream<C> | AsyncIterable<C>;

/**
 * {@link readEvents} a chunk at a time, for either framing: the items each chunk completed, empty arrays skipped.
 * A decoding error's partial (what the failing chunk completed first) is delivered before the error.
 */
export async function* readBatches<C extends Uint8Array | string, T>(
  source: ChunkSource<C>,
  decoder: PushDecoder<C | Uint8Array, T>,
  signal: AbortSignal | undefined,
  partialOf: (error: unknown) => T[] | undefined,
): AsyncGenerator<T[], void, undefined> {
  const chunks = open(source);
  let finished = false;
  // An abort rejects the read in progress. Each read gets its own promise, settled by the read or by the one abort
  // listener: a Promise.race against one promise that lives as long as the stream would keep every chunk read
  // (each race's result hangs on that promise) until the stream ends. The abort rejects a microtask later, so a read
  // that had already delivered its chunk wins and what was received is not lost.
  let failRead: ((reason: unknown) => void) | undefined;
  const onAbort = () => queueMicrotask(() => failRead?.(signal?.reason));
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    while (true) {
      signal?.throwIfAborted();
      const read = chunks.next();
      const result = await (signal
        ? new Promise<IteratorResult<C | Uint8Array>>((resolve, reject) => {
            failRead = reject;
            read.then(resolve, reject); // a read left behind by an abort may still fail: handled here
          })
        : read);
      if (result.done) break;
      let events: T[];
      try {
        events = decoder.push(result.value);
      } catch (error) {
        const partial = partialOf(error);
        if (partial && partial.length > 0) yield partial;
        throw error;
      }
      if (events.length > 0) yield events;
    }
    finished = true;
    let events: T[];
    try {
      events = decoder.end();
    } catch (error) {
      const partial = partialOf(error);
      if (partial && partial.length > 0) yield partial;
      throw error;
    }
    if (events.length > 0) yield events;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (finished) chunks.release();
    else chunks.cancel(signal?.reason);
  }
}


interface Chunks<C> {
  next(): Promise<IteratorResult<C>>;
  /** Stops the source early. */
  cancel(reason: unknown): void;
  /** Lets go of a source that ended. */
  release(): void;
}

/** A Response's body is bytes whatever the source's chunk type. */
function open<C>(source: ChunkSource<C>): Chunks<C | Uint8Array> {
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

function isReadableStream<C>(source: ChunkSource<C>): source is ReadableStream<C> {
  return 'getReader' in source && typeof source.getReader === 'function';
}

function noop(): void {}
