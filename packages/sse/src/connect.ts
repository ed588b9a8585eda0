import { SseDecoder } from './decoder.js';
import type { SseEvent } from './event.js';
import { SseError } from './errors.js';
import { readEvents } from './parse.js';
import { isRetryableStatus } from './retryable.js';

/** How {@link connectSse} waits between connections. */
export interface SseRetryOptions {
  /** Reconnection time in milliseconds until the server sends `retry:`. Default 1000. */
  delay?: number;
  /** Cap in milliseconds on the backed-off wait (a server's `retry:` above it still wins). Default 30 000. */
  maxDelay?: number;
  /**
   * Connections in a row that may fail (network error, retryable status, or a close before any event) before the
   * last failure is thrown. Default Infinity, as EventSource.
   */
  maxAttempts?: number;
  /**
   * Whether a body that ends normally is connected again (default true, as EventSource). False for a server whose
   * clean close is the stream's end: then only a network error reconnects.
   */
  reconnectOnClose?: boolean;
}

/** A fetch `RequestInit` plus the reader's own options. */
export interface ConnectSseInit extends RequestInit {
  retry?: SseRetryOptions;
  /** Aborting stops the reader (and any wait) with the signal's reason. */
  signal?: AbortSignal;
  /** The fetch to use; default `globalThis.fetch`. */
  fetch?: typeof fetch;
}

/** How one connection ended: `failure` undefined is a clean close. */
type Outcome = { received: boolean; failure: unknown } | 'stop';

/**
 * An EventSource-like reader over fetch: any method, headers and (replayable) body.
 *
 * After a network error or a close (unless `retry.reconnectOnClose` is false) it connects again, sending
 * `Last-Event-ID`, and waits the reconnection time (the server's `retry:` or `retry.delay`). Connections in a row that bring no event back off exponentially with
 * jitter, up to `retry.maxDelay`. It never yields an event whose id it has yielded before.
 *
 * A status that {@link isRetryableStatus} accepts (408, 409, 429, any 5xx) is a failed connection too; any other
 * non-2xx is final.
 *
 * It ends when the server answers 204, when the consumer stops, or when the signal aborts (rejecting with
 * `signal.reason`). It throws `SseError` `http_error` on a status it does not retry (or on a 2xx that is not
 * `text/event-stream`), and `http_error` or `network_error` when `retry.maxAttempts` runs out.
 */
export function connectSse(input: string | URL | Request, init: ConnectSseInit = {}): AsyncIterable<SseEvent> {
  return { [Symbol.asyncIterator]: () => reconnecting(input, init) };
}

async function* reconnecting(input: string | URL | Request, init: ConnectSseInit): AsyncGenerator<SseEvent, void> {
  const { retry = {}, fetch: fetchImpl = globalThis.fetch, signal, ...requestInit } = init;
  const { delay = 1000, maxDelay = 30_000, maxAttempts = Number.POSITIVE_INFINITY, reconnectOnClose = true } = retry;
  const request = new Request(input, requestInit);
  const decoder = new SseDecoder();
  const yielded = new Set<string>();
  for (let failures = 0; ; ) {
    const outcome = yield* connectOnce(fetchImpl, request, decoder, yielded, signal);
    if (outcome === 'stop' || (!reconnectOnClose && outcome.failure === undefined)) return;
    failures = outcome.received ? 0 : failures + 1;
    if (failures > 0 && failures >= maxAttempts) throw finalError(outcome.failure, failures);
    await sleep(backoff(decoder.retry ?? delay, failures, maxDelay), signal);
  }
}

async function* connectOnce(
  fetchImpl: typeof fetch,
  request: Request,
  decoder: SseDecoder,
  yielded: Set<string>,
  signal: AbortSignal | undefined,
): AsyncGenerator<SseEvent, Outcome> {
  let response: Response;
  try {
    response = await fetchImpl(withLastEventId(request, decoder.lastEventId), { signal });
  } catch (error) {
    signal?.throwIfAborted();
    return { received: false, failure: error };
  }
  if (response.status === 204) {
    discard(response);
    return 'stop';
  }
  const refused = refusal(response);
  if (refused) {
    discard(response);
    if (isRetryableStatus(response.status)) return { received: false, failure: refused };
    throw refused;
  }
  let received = false;
  try {
    for await (const event of readEvents(response, decoder, signal)) {
      received = true;
      if (event.id) {
        if (yielded.has(event.id)) continue;
        yielded.add(event.id);
      }
      yield event;
    }
    return { received, failure: undefined };
  } catch (error) {
    signal?.throwIfAborted();
    if (error instanceof SseError) throw error;
    decoder.end(); // drop the broken block; lastEventId falls back to the last dispatch
    return { received, failure: error };
  }
}

/** The next attempt's request: a fresh copy (bodies are read once) with the resume headers. */
function withLastEventId(request: Request, lastEventId: string | undefined): Request {
  const headers = new Headers(request.headers);
  if (!headers.has('accept')) headers.set('accept', 'text/event-stream');
  if (lastEventId) headers.set('last-event-id', lastEventId);
  else if (lastEventId === '') headers.delete('last-event-id'); // the server reset the id
  return new Request(request.clone(), { headers });
}

function refusal(response: Response): SseError | undefined {
  const { status } = response;
  if (!response.ok) return new SseError(`HTTP ${status} ${response.statusText}`.trim(), { code: 'http_error', status });
  const type = response.headers.get('content-type');
  if (type !== null && !type.toLowerCase().startsWith('text/event-stream'))
    return new SseError(`Expected text/event-stream, got ${type}`, { code: 'http_error', status });
  return undefined;
}

function finalError(failure: unknown, attempts: number): SseError {
  if (failure instanceof SseError) return failure;
  const message =
    failure === undefined
      ? `The server closed ${attempts} connections in a row before sending an event`
      : `${attempts} connections in a row failed`;
  return new SseError(message, { code: 'network_error', cause: failure });
}

/** The reconnection time after a connection that brought events; after failures, a jittered exponential wait. */
function backoff(base: number, failures: number, maxDelay: number): number {
  const ceiling = Math.max(base, Math.min(maxDelay, base * 2 ** failures));
  return base + Math.random() * (ceiling - base);
}

function discard(response: Response): void {
  response.body?.cancel().catch(() => {});
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.min(ms, 2 ** 31 - 1));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
