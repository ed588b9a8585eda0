/** The two server faces of the proxy: a node:http request listener and a fetch handler, over one {@link route}. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sseResponse, writeSse } from '../server.js';
import { type Incoming, MAX_BODY_BYTES, type ProxyContext, type Reply, tooLarge } from './context.js';
import { errorReply, route } from './route.js';

/** Serves one node:http request. A client that disconnects aborts the upstream request. */
export function serveNode(context: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new Error('The client disconnected'));
  });
  const incoming: Incoming = {
    method: req.method ?? 'GET',
    path: new URL(req.url ?? '/', 'http://localhost').pathname,
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    },
    text: () => readBody(req),
  };
  route(context, incoming, controller.signal)
    .catch((error: unknown) => errorReply(context, error))
    .then((reply) => sendNode(context, res, reply))
    .catch(() => res.destroy());
}

function sendNode(context: ProxyContext, res: ServerResponse, reply: Reply): void {
  if (res.destroyed) return;
  const headers = { ...context.headers, ...reply.headers };
  if (reply.stream) {
    writeSse(res, reply.stream, { headers, heartbeatMs: context.heartbeatMs }).catch(() => {});
    return;
  }
  res.writeHead(reply.status, reply.body === undefined ? headers : { 'content-type': 'application/json', ...headers });
  res.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
}

/** Serves one fetch request; `request.signal` or cancelling the response body aborts the upstream request. */
export async function serveFetch(context: ProxyContext, request: Request): Promise<Response> {
  const controller = new AbortController();
  const abort = () => controller.abort(request.signal.reason);
  if (request.signal.aborted) abort();
  else request.signal.addEventListener('abort', abort, { once: true });
  const incoming: Incoming = {
    method: request.method,
    path: new URL(request.url).pathname,
    header: (name) => request.headers.get(name) ?? undefined,
    text: async () => {
      if (Number(request.headers.get('content-length')) > MAX_BODY_BYTES) throw tooLarge();
      const text = await request.text();
      if (text.length > MAX_BODY_BYTES) throw tooLarge();
      return text;
    },
  };
  const reply = await route(context, incoming, controller.signal).catch((error: unknown) => errorReply(context, error));
  const headers = { ...context.headers, ...reply.headers };
  const { stream } = reply;
  if (stream)
    return sseResponse(
      (signal) => {
        signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
        return stream;
      },
      { headers, heartbeatMs: context.heartbeatMs },
    );
  if (reply.body === undefined) return new Response(null, { status: reply.status, headers });
  return Response.json(reply.body, { status: reply.status, headers });
}

/** The request body as text, or a 413 HttpError past {@link MAX_BODY_BYTES} (the rest is read and dropped). */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => (size > MAX_BODY_BYTES ? reject(tooLarge()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
    req.on('close', () => reject(new Error('The client left before sending the whole body'))); // no-op after 'end'
  });
}
