/**
 * The web-chat example: a scripted typed-event daemon, the OpenAI-compatible proxy in front of it, and a page that
 * streams answers in the browser with @ai4ts/sse (fetch + reader, a POST with a body, which EventSource cannot do).
 * The page asks for resumable streams: reload it mid-answer and it reads the rest from the proxy's store.
 *
 *   npx tsc -b packages/sse                 # the page loads @ai4ts/sse's built ESM from packages/sse/dist
 *   npx tsx examples/web-chat/server.ts     # then open the printed URL
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createGateway } from '@ai4ts/gateway';

const HERE = new URL('./', import.meta.url);
const SSE_DIST = new URL('../../packages/sse/dist/', import.meta.url);

/** The page's own files, by URL path. */
const PAGE_FILES: Record<string, [file: string, type: string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
};

export interface WebChat {
  /** The page's URL. */
  url: string;
  close(): Promise<void>;
}

export interface WebChatOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Pause between the daemon's tokens, so that streaming is visible. Default 40 ms. */
  tokenDelayMs?: number;
}

/** Starts the scripted daemon and the page server (with the proxy under /v1), both on 127.0.0.1. */
export async function startWebChat(options: WebChatOptions = {}): Promise<WebChat> {
  const daemon = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => void answer(res, JSON.parse(body) as { message: string }, options.tokenDelayMs ?? 40));
  });
  const daemonUrl = `http://127.0.0.1:${await listen(daemon, 0)}/chat`;

  const proxy = createGateway({ upstream: daemonUrl, dialect: 'typed' });
  const site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path.startsWith('/v1/')) return proxy.node(req, res);
    const page = PAGE_FILES[path];
    if (page) return void send(res, new URL(page[0], HERE), page[1]);
    const module = /^\/sse\/([a-z0-9-]+\.js)$/.exec(path)?.[1];
    if (module) return void send(res, new URL(module, SSE_DIST), 'text/javascript; charset=utf-8');
    res.writeHead(404).end();
  });
  const port = await listen(site, options.port ?? 0);
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      await Promise.all([site, daemon].map(stop));
    },
  };
}

/** The scripted daemon: reasoning, then the answer token by token, usage, done (the typed-event dialect). */
async function answer(res: ServerResponse, request: { message: string }, delayMs: number): Promise<void> {
  const send = (event: Record<string, unknown>) => res.write(`data: ${JSON.stringify(event)}\n\n`);
  const pause = () => new Promise((resolve) => setTimeout(resolve, delayMs));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const piece of ['Reading the question. ', 'Composing a reply.']) {
    send({ type: 'reasoning', content: piece });
    await pause();
  }
  const text = `You asked: "${request.message}". This answer streams token by token through the proxy.`;
  for (const token of text.match(/\S+\s*/g) ?? []) {
    if (res.destroyed) return;
    send({ type: 'text', content: token });
    await pause();
  }
  send({
    type: 'tokens',
    prompt: request.message.length,
    completion: text.length,
    total: request.message.length + text.length,
  });
  res.end(`data: ${JSON.stringify({ type: 'done', session_id: 'web-chat' })}\n\n`);
}

async function send(res: ServerResponse, file: URL, type: string): Promise<void> {
  try {
    const body = await readFile(fileURLToPath(file));
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found (run `npx tsc -b packages/sse` for /sse/)');
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const chat = await startWebChat({ port: Number(process.env.PORT ?? 3000) });
  process.stdout.write(`web chat on ${chat.url}\n`);
}
