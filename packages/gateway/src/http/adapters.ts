/** The gateway's two server adapters: a node:http request listener and a fetch handler, over one {@link route}. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sseResponse, writeSse } from '@ai4ts/bridge';
import { follow } from '@ai4ts/core/internal';
import type { SseMessage } from '@ai4ts/sse';
import type { GatewayContext } from '../context.js';
import { asksClose, lingerOnClose } from './connection.js';
import type { Incoming } from './incoming.js';
import { MAX_BODY_BYTES, tooLarge } from './limits.js';
import { type Outgoing, outgoing } from './outgoing.js';
import { errorReply, route } from './route.js';

/** Serves one node:http request. A client that disconnects, or an answer that fails, aborts the upstream request. */
export function serveNode(context: GatewayContext, req: IncomingMessage, res: ServerResponse): void {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new Error('The client disconnected'));
  });
  const body = new NodeBody(req);
  const url = new URL(req.url ?? '/', 'http://localhost');
  const incoming: Incoming = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    scheme: 'encrypted' in req.socket && req.socket.encrypted === true ? 'https' : 'http',
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    },
    text: () => body.text(),
  };
  route(context, incoming, controller.signal)
    .catch((error: unknown) => errorReply(context, error))
    .then((reply) => {
      if (body.unread) lingerOnClose(req.socket);
      sendNode(context, res, outgoing(context, reply), body.unread || asksClose(req.headers.connection));
    })
    .catch((error: unknown) => {
      controller.abort(error);
      res.destroy();
    });
}

function sendNode(context: GatewayContext, res: ServerResponse, reply: Outgoing, close: boolean): void {
  if (res.destroyed) {
    void reply.stream?.[Symbol.asyncIterator]().return?.();
    return;
  }
  // A body left unread must not be read to its end to reuse the connection: close it once the answer is out.
  const headers = close ? { ...reply.headers, connection: 'close' } : reply.headers;
  if (reply.stream) {
    const { trailers } = reply;
    const stream = trailers ? thenTrailers(reply.stream, res, trailers) : reply.stream;
    const declared = trailers ? { ...headers, trailer: Object.keys(trailers).join(', ') } : headers;
    writeSse(res, stream, { headers: declared, heartbeatMs: context.heartbeatMs }).catch(() => {});
    return;
  }
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/**
 * The stream, then its trailers added once its last message is out, before writeSse ends the response (a stream that
 * fails ends with no trailer: the connection is destroyed).
 */
async function* thenTrailers(
  stream: AsyncIterable<SseMessage>,
  res: ServerResponse,
  trailers: Record<string, () => string | undefined>,
): AsyncGenerator<SseMessage> {
  yield* stream;
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(trailers)) {
    const read = value();
    if (read !== undefined) values[name] = read;
  }
  res.addTrailers(values);
}

/**
 * A node:http request body read up to {@link MAX_BODY_BYTES}: past it (or when Content-Length says so) reading
 * stops at once and `text()` rejects with a 413, so an oversized body is neither held nor read to its end.
 */
class NodeBody {
  readonly #req: IncomingMessage;
  #read = false;
  #refused = false;

  constructor(req: IncomingMessage) {
    this.#req = req;
  }

  /**
   * Whether a body was left unread: refused past the limit, or never read (a 401, 404 or 405 answered first).
   * node:http would then read it to its end to reuse the connection, so the connection is closed instead.
   */
  get unread(): boolean {
    if (this.#refused) return true;
    const { headers } = this.#req;
    return !this.#read && (headers['transfer-encoding'] !== undefined || Number(headers['content-length']) > 0);
  }

  text(): Promise<string> {
    const req = this.#req;
    this.#read = true;
    if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
      this.#refused = true;
      return Promise.reject(tooLarge());
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const stop = () => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', reject);
        req.off('close', onClose);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_BODY_BYTES) {
          chunks.push(chunk);
          return;
        }
        stop();
        req.pause();
        chunks.length = 0;
        this.#refused = true;
        reject(tooLarge());
      };
      const onEnd = () => {
        stop();
        resolve(Buffer.concat(chunks).toString('utf8'));
      };
      const onClose = () => {
        stop();
        reject(new Error('The client left before sending the whole body'));
      };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', reject);
      req.on('close', onClose);
    });
  }
}

/** Serves one fetch request; `request.signal`, cancelling the response body or a failed answer aborts the upstream. */
export async function serveFetch(context: GatewayContext, request: Request): Promise<Response> {
  const controller = new AbortController();
  follow(request.signal, controller);
  const url = new URL(request.url);
  const incoming: Incoming = {
    method: request.method,
    path: url.pathname,
    query: url.searchParams,
    scheme: url.protocol.slice(0, -1),
    header: (name) => request.headers.get(name) ?? undefined,
    text: () => fetchBodyText(request),
  };
  const reply = outgoing(
    context,
    await route(context, incoming, controller.signal).catch((error: unknown) => errorReply(context, error)),
  );
  const headers = asksClose(request.headers.get('connection')) ? { ...reply.headers, connection: 'close' } : reply.headers;
  const { stream } = reply;
  try {
    if (stream)
      return sseResponse(
        (signal) => {
          follow(signal, controller);
          return stream;
        },
        { headers, heartbeatMs: context.heartbeatMs },
      );
    return new Response(reply.body ?? null, { status: reply.status, headers });
  } catch (error) {
    // The answer could not be built: the upstream must not go on for nobody, and the caller still gets a reply.
    controller.abort(error);
    void stream?.[Symbol.asyncIterator]().return?.();
    const failure = { message: 'The proxy could not build its answer', type: 'server_error', param: null, code: null };
    return Response.json({ error: failure }, { status: 500 });
  }
}

/**
 * A fetch request's body as text, counted while it is read: past {@link MAX_BODY_BYTES} (or when Content-Length says
 * so) the body is cancelled and a 413 thrown, so memory stays bounded whatever the client sends.
 */
async function fetchBodyText(request: Request): Promise<string> {
  const { body } = request;
  if (Number(request.headers.get('content-length')) > MAX_BODY_BYTES) {
    await body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  // No Buffer: fetch-style runtimes may not have it.
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
