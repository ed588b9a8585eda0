/**
 * The CLI's upstream fetch: a plain-HTTP upstream (a daemon on this machine or the network) is called through
 * node:http, anything else through the global fetch. node:http sends a request's headers and body in one write and
 * hands the response over without fetch's extra layers; that was most of the first-byte time the proxy added.
 * No redirect is followed and no encoding asked for (none is sent, so none comes back compressed).
 */
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';

/** Statuses whose response has no body; `Response` refuses one for them. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A `fetch`: `http:` URLs with a text or byte body through node:http, the rest through the global fetch. */
export function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = input instanceof Request ? undefined : new URL(input);
  const { body } = init;
  const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (url?.protocol !== 'http:' || !plainBody) return fetch(input, init);
  return send(url, init, body ?? undefined);
}

function send(url: URL, init: RequestInit, body: string | Uint8Array | undefined): Promise<Response> {
  const { signal } = init;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const headers: Record<string, string> = {};
  for (const [name, value] of new Headers(init.headers)) headers[name] = value;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'GET', headers });
    const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const forget = () => signal?.removeEventListener('abort', onAbort);
    req.on('error', (error) => {
      forget();
      // As fetch fails: a TypeError whose cause says why; an abort with the signal's reason.
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
    });
    req.on('response', (res) => {
      res.on('close', forget);
      resolve(responseOf(res));
    });
    req.end(body);
  });
}

/** The node:http response as a fetch Response; its body streams from the socket (destroyed when cancelled). */
function responseOf(res: IncomingMessage): Response {
  const status = res.statusCode ?? 502;
  const headers = new Headers();
  for (const [name, values] of Object.entries(res.headersDistinct)) for (const value of values ?? []) headers.append(name, value);
  if (NULL_BODY_STATUSES.has(status)) {
    res.resume();
    return new Response(null, { status, statusText: res.statusMessage, headers });
  }
  const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
  return new Response(body, { status, statusText: res.statusMessage, headers });
}
