/** The answer to a non-streaming request, read the same way by every protocol's `create`. */
import { ApiError, isRecord } from '../errors.js';
import { collectInto, type StreamListener } from '../listener.js';
import { readJsonBody } from './json-body.js';
import { withOwnSignal } from './signal.js';
import type { ModelProtocol } from '../observe/call.js';
import type { RequestOptions, Transport } from '../transport/transport.js';

/**
 * Where one request goes and what the API receives, from the request as the middleware left it: Gemini's model is
 * in the URL, not the body. `body` absent: the request as it is; `query` goes over the caller's.
 */
export interface Endpoint {
  path: string;
  query?: Record<string, string> | undefined;
  body?: Record<string, unknown> | undefined;
}

/** A fixed path, or the endpoint of each request (see {@link Endpoint}). */
export type Route = string | ((request: Record<string, unknown>) => Endpoint);

/** The endpoint of `request` by `route`, and the options it is sent with. */
export function endpointOf<O extends RequestOptions>(
  route: Route,
  request: Record<string, unknown>,
  options: O,
): { path: string; body: Record<string, unknown>; options: O } {
  if (typeof route === 'string') return { path: route, body: request, options };
  const { path, query, body = request } = route(request);
  return { path, body, options: query ? { ...options, query: { ...options.query, ...query } } : options };
}

/**
 * One non-streaming model request of any protocol, watched as a model call ({@link Transport.call}): POST `body`
 * (as the middleware leaves it) where `route` says, then {@link readCreated}. `options` are the call's (a request's
 * own `telemetry` merged in).
 */
export function sendCreate<Final>(
  transport: Transport,
  protocol: ModelProtocol<Final>,
  route: Route,
  body: Record<string, unknown>,
  options: RequestOptions,
  reader: Pick<CreatedReader<Final>, 'listener' | 'parse'>,
): Promise<Final> {
  const call = transport.call(protocol, body, options);
  return call.run(() =>
    withOwnSignal(options.signal, async (signal) => {
      const to = endpointOf(route, call.body, { ...options, signal });
      const response = await transport.request(to.path, { method: 'POST', body: to.body, options: to.options, watch: call });
      return readCreated(response, { ...reader, signal, secrets: transport.secrets(options) });
    }),
  );
}

/** How {@link readCreated} turns a body into the protocol's result. */
export interface CreatedReader<Final> {
  signal?: AbortSignal | undefined;
  /** Redacted from the body before it is read (the call's API key: `transport.secrets(options)`). */
  secrets?: readonly string[] | undefined;
  /** A fresh listener, for a server that streams although asked not to (some daemons and gateways always do). */
  listener: () => StreamListener<Final>;
  /** Checks (cheaply) that the parsed JSON is the protocol's result; throws ProtocolError when it is not. */
  parse: (json: unknown, text: string) => Final;
}

/**
 * Reads a successful response to a non-streaming request: SSE is collected through the listener, JSON parsed and
 * checked. A 200 body holding `{ error }` is the provider's ApiError; a body that is not JSON a ProtocolError; a
 * read that breaks a ConnectionError (an AbortError when the caller aborted).
 */
export async function readCreated<Final>(response: Response, reader: CreatedReader<Final>): Promise<Final> {
  const { signal, secrets = [] } = reader;
  if (response.headers.get('content-type')?.includes('text/event-stream')) {
    return collectInto(response, reader.listener(), { signal, secrets });
  }
  const { text, json } = await readJsonBody(response, signal, secrets);
  if (isRecord(json) && json.error !== undefined && json.error !== null) throw ApiError.fromStreamError(json, undefined);
  return reader.parse(json, text);
}
