/**
 * A scripted OpenAI-compatible model server on 127.0.0.1: real sockets, real SSE, realistic fragmentation.
 * For tests, examples and `npm start`.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeSse } from '@ai4ts/sse';
import { type ChatRequestBody, chatChunks, chatCompletion, type MockTurn, resolveTurn } from './chat.js';
import { seededRandom } from './fragment.js';

/** What a script learns about the request besides its body. */
export interface MockScriptContext {
  /** Which chat completion request this is, counted from 1 since the server started. */
  step: number;
  headers: IncomingHttpHeaders;
}

/** Decides the model's turn from the request body: a function, or a list of turns answered in order. */
export type MockScript =
  | ((body: ChatRequestBody, context: MockScriptContext) => MockTurn | Promise<MockTurn>)
  | readonly MockTurn[];

/** Options of {@link startMockModel}. */
export interface MockModelOptions {
  script: MockScript;
  /** Seeds the fragmenting and the generated ids; each request uses `seed + step`. Default 1. */
  seed?: number;
  /** Model ids listed by `GET /v1/models`. Default `['mock-model']`. */
  models?: readonly string[];
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
}

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; the raw text when it was not JSON; undefined when empty. */
  body: unknown;
}

/** A running mock model server. */
export interface MockModel {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `http://127.0.0.1:<port>/v1`: what an OpenAI client takes as `baseURL`. */
  baseURL: string;
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

/**
 * Starts a scripted model. Serves `POST /v1/chat/completions` (streamed when `stream: true`) and `GET /v1/models`.
 *
 * @example
 * const model = await startMockModel({ script: [{ content: 'Hello!' }] });
 * const client = new OpenAI({ baseURL: model.baseURL, apiKey: 'test' });
 * // ...
 * await model.close();
 */
export async function startMockModel(options: MockModelOptions): Promise<MockModel> {
  const { script, seed = 1, models = ['mock-model'], port = 0 } = options;
  const requests: RecordedRequest[] = [];
  let steps = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, error instanceof Error ? error.message : String(error), 'server_error');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const text = await readBody(req);
    const body = parseJson(text);
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });

    if (req.method === 'GET' && path === '/v1/models') {
      const data = models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'ai4ts-testing' }));
      return sendJson(res, 200, { object: 'list', data });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      if (!isChatBody(body)) return sendError(res, 400, 'The body must be a JSON object with a messages array');
      const step = ++steps;
      const turn = await turnFor(script, body, { step, headers: req.headers });
      return answerChat(res, body, turn, step, seed + step);
    }
    sendError(res, 404, `No route for ${req.method} ${path}`, 'not_found');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function turnFor(script: MockScript, body: ChatRequestBody, context: MockScriptContext): Promise<MockTurn> {
  if (typeof script === 'function') return script(body, context);
  const turn = (script as readonly MockTurn[])[context.step - 1];
  if (!turn) throw new Error(`The script has no turn for request ${context.step}`);
  return turn;
}

async function answerChat(res: ServerResponse, body: ChatRequestBody, scripted: MockTurn, step: number, seed: number) {
  if (scripted.httpError) {
    const { status, body: errorBody } = scripted.httpError;
    return errorBody === undefined ? sendError(res, status, `Scripted HTTP ${status}`) : sendJson(res, status, errorBody);
  }
  const random = seededRandom(seed);
  const turn = resolveTurn(scripted, body, random);
  const id = `chatcmpl-mock-${step}`;
  const created = Math.floor(Date.now() / 1000);
  if (body.stream !== true) return sendJson(res, 200, chatCompletion(turn, body, id, created));

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  const payloads: unknown[] = chatChunks(turn, body, id, created, random);
  if (scripted.streamError) payloads.splice(-(body.stream_options?.include_usage ? 2 : 1), Infinity, { error: scripted.streamError });
  const cutOff = scripted.cutOff;
  let sent = 0;
  for (const payload of payloads) {
    if (cutOff && sent >= cutOff.afterChunks) return cutOff.reset ? res.destroy() : res.end();
    if (scripted.chunkDelayMs) await sleep(scripted.chunkDelayMs);
    if (res.destroyed) return;
    res.write(encodeSse({ data: JSON.stringify(payload) }));
    sent++;
  }
  if (scripted.streamError) return res.end();
  res.end(encodeSse({ data: '[DONE]' }));
}

function sendJson(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function sendError(res: ServerResponse, status: number, message: string, type = 'invalid_request_error') {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  req.setEncoding('utf8');
  for await (const chunk of req) text += chunk;
  return text;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isChatBody(body: unknown): body is ChatRequestBody {
  return typeof body === 'object' && body !== null && Array.isArray((body as ChatRequestBody).messages);
}
