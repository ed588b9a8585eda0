/**
 * A scripted model server on 127.0.0.1 that speaks Chat Completions, Responses, Messages and Gemini from one script:
 * real sockets, real SSE, realistic fragmentation. For tests, examples and `npm start`. This file routes; chat.ts,
 * responses.ts, messages.ts and gemini.ts write the protocols.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeSse, type SseMessage } from '@ai4ts/sse';
import { type ChatRequestBody, chatCompletion, chatEvents, chatRequestProblem, isChatBody } from './chat.js';
import { embeddingsAnswer, type JsonAnswer, type MockEmbeddingsOptions, rerankAnswer } from './embeddings.js';
import { seededRandom } from './fragment.js';
import {
  type GeminiRender,
  type GeminiRequestBody,
  geminiError,
  geminiEvents,
  geminiPrompt,
  geminiRequestProblem,
  geminiResponse,
  geminiRoute,
  geminiTurn,
} from './gemini.js';
import {
  isMessagesBody,
  type MessagesRequestBody,
  messageObject,
  messagesError,
  messagesErrorType,
  messagesEvents,
  messagesPrompt,
  messagesRequestProblem,
  messagesTurn,
  thinkingSeals,
} from './messages.js';
import {
  encryptedContents,
  isResponsesBody,
  type ResponsesRequestBody,
  responseObject,
  responsesEvents,
  responsesPrompt,
  responsesRequestProblem,
  StoredResponses,
} from './responses.js';
import { type MockTurn, type RenderContext, type ResolvedTurn, resolveTurn } from './turn.js';

/** The body of a request to any of the model routes. */
export type MockRequestBody = ChatRequestBody | ResponsesRequestBody | MessagesRequestBody | GeminiRequestBody;

interface ScriptContextBase {
  /** Which model request this is, whatever its protocol, counted from 1 since the server started. */
  step: number;
  headers: IncomingHttpHeaders;
}

/**
 * What a script learns about the request besides its body. `protocol` tells which route was called and narrows
 * `body` (the same object as the script's first argument) to that protocol's request type.
 */
export type MockScriptContext =
  | (ScriptContextBase & { protocol: 'chat'; body: ChatRequestBody })
  | (ScriptContextBase & { protocol: 'responses'; body: ResponsesRequestBody })
  | (ScriptContextBase & { protocol: 'messages'; body: MessagesRequestBody })
  | (ScriptContextBase & { protocol: 'gemini'; body: GeminiRequestBody; model: string });

/**
 * Decides the model's turn from the request: a function, or a list of turns answered in order (request N, of any
 * protocol, gets turn N). The same turn is rendered as Chat Completions, Responses or Messages by the route called.
 */
export type MockScript =
  | ((body: MockRequestBody, context: MockScriptContext) => MockTurn | Promise<MockTurn>)
  | readonly MockTurn[];

/** Options of {@link startMockModel}. */
export interface MockModelOptions {
  /** The turns to answer, whichever of the three routes is called. */
  script: MockScript;
  /** Seeds the fragmenting and the generated ids; each request uses `seed + step`. Default 1. */
  seed?: number;
  /** Model ids listed by `GET /v1/models`. Default `['mock-model']`. */
  models?: readonly string[];
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** How `/v1/embeddings` and `/v1/rerank` answer: batch limits, dimensions, a delay, scripted HTTP errors. */
  embeddings?: MockEmbeddingsOptions;
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
  /** `http://127.0.0.1:<port>`: what the Anthropic client takes as `baseURL` (it appends `/v1/messages`). */
  url: string;
  /** `http://127.0.0.1:<port>/v1`: what an OpenAI client takes as `baseURL`. */
  baseURL: string;
  /** `http://127.0.0.1:<port>/v1beta`: what a Gemini client takes as `baseURL` (the `gemini` preset's shape). */
  geminiBaseURL: string;
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

/**
 * Starts a scripted model. Serves `POST /v1/chat/completions` (OpenAI Chat Completions), `POST /v1/responses`
 * (OpenAI Responses) and `POST /v1/messages` (Anthropic Messages), each streamed when `stream: true`, and
 * `POST /v1beta/models/{model}:generateContent` / `:streamGenerateContent?alt=sse` (Gemini), from the same script,
 * `GET /v1/models`, and `POST /v1/embeddings` and `POST /v1/rerank` (vectors from the text, no script: see
 * {@link MockEmbeddingsOptions}).
 *
 * @example
 * const model = await startMockModel({ script: [{ content: 'Hello!' }] });
 * const client = new OpenAI({ baseURL: model.baseURL, apiKey: 'test' });
 * // ...
 * await model.close();
 */
export async function startMockModel(options: MockModelOptions): Promise<MockModel> {
  const { script, seed = 1, models = ['mock-model'], port = 0, embeddings = {} } = options;
  const requests: RecordedRequest[] = [];
  const stored = new StoredResponses();
  /** Every Gemini thought signature given, which a Gemini 3 request must send back unchanged. */
  const signatures = new Set<string>();
  /** Every Messages thinking signature and redacted data, and Responses encrypted reasoning, given: only these come back. */
  const sealed = new Set<string>();
  let steps = 0;
  /** Embeddings and rerank requests so far, which `embeddings.httpErrors` is counted by (the script is not asked). */
  let vectorRequests = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) sendError(res, requestPath(req), 500, message, 'server_error');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = requestPath(req);
    const body = parseJson(await readBody(req));
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
    const headers = req.headers;
    // Every answer carries a request id the way the real APIs do: Anthropic's `request-id`, OpenAI's `x-request-id`.
    res.setHeader(path === '/v1/messages' ? 'request-id' : 'x-request-id', `req_${requests.length}`);

    if (req.method === 'GET' && path === '/v1/models') {
      const data = models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'ai4ts-testing' }));
      return sendJson(res, 200, { object: 'list', data });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      if (!isChatBody(body)) return sendError(res, path, 400, 'The body must be a JSON object with a messages array');
      const problem = chatRequestProblem(body);
      if (problem !== undefined) return sendError(res, path, 400, problem, 'invalid_request_error');
      const step = ++steps;
      const turn = await turnFor(script, { protocol: 'chat', body, step, headers });
      return answer(res, renderers.chat, body, turn, step, seed, sealed);
    }
    if (req.method === 'POST' && path === '/v1/responses') {
      if (!isResponsesBody(body)) return sendError(res, path, 400, 'The body must be a JSON object with an input string or array');
      const conversation = stored.resolve(body);
      if (!conversation) {
        const message = `Previous response with id '${body.previous_response_id}' not found.`;
        return sendError(res, path, 400, message, 'previous_response_not_found');
      }
      const problem = responsesRequestProblem(conversation, sealed);
      if (problem !== undefined) return sendError(res, path, 400, problem, 'invalid_request_error');
      const step = ++steps;
      const turn = await turnFor(script, { protocol: 'responses', body: conversation, step, headers });
      // Rendered from the whole conversation: its usage counts every input token, as the API bills a continued turn.
      return stored.store(conversation, await answer(res, renderers.responses, conversation, turn, step, seed, sealed));
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      if (!isMessagesBody(body))
        return sendError(res, path, 400, 'The body must be a JSON object with a messages array and a numeric max_tokens');
      const problem = messagesRequestProblem(body, sealed);
      if (problem !== undefined) return sendError(res, path, 400, problem);
      const step = ++steps;
      const turn = messagesTurn(await turnFor(script, { protocol: 'messages', body, step, headers }), body);
      return answer(res, renderers.messages, body, turn, step, seed, sealed);
    }
    if (req.method === 'POST' && (path === '/v1/embeddings' || path === '/v1/rerank')) {
      const failure = embeddings.httpErrors?.[vectorRequests++];
      if (embeddings.delayMs) await sleep(embeddings.delayMs);
      if (failure) {
        res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
        if (failure.body !== undefined) return res.end(JSON.stringify(failure.body));
        const standard = openAIErrorOf(failure.status);
        return res.end(JSON.stringify({ error: { message: `Scripted HTTP ${failure.status}`, param: null, ...standard } }));
      }
      const answered: JsonAnswer = path === '/v1/embeddings' ? embeddingsAnswer(body, embeddings) : rerankAnswer(body, embeddings);
      return sendJson(res, answered.status, answered.body);
    }
    const gemini = req.method === 'POST' ? geminiRoute(path) : undefined;
    if (gemini && (gemini.method === 'generateContent' || gemini.method === 'streamGenerateContent')) {
      const problem = geminiRequestProblem(body, gemini.model, signatures);
      if (problem !== undefined) return sendJson(res, 400, geminiError(400, problem));
      const geminiBody = body as GeminiRequestBody;
      const step = ++steps;
      const context = { protocol: 'gemini' as const, body: geminiBody, model: gemini.model, step, headers };
      const scripted = geminiTurn(await turnFor(script, context));
      const render: GeminiRender = {
        model: gemini.model,
        scriptedIds: new Set((scripted.toolCalls ?? []).flatMap((call) => (call.id === undefined ? [] : [call.id]))),
        issued: signatures,
        scripted,
      };
      const streamed = gemini.method === 'streamGenerateContent';
      if (streamed && new URL(req.url ?? '/', 'http://localhost').searchParams.get('alt') !== 'sse') {
        return sendJson(res, 400, geminiError(400, 'This scripted model streams Gemini as SSE only: add alt=sse'));
      }
      const renderer: Renderer<GeminiRequestBody> = {
        answerId: (n) => `gemini-mock-${n}`,
        callIdPrefix: 'call_',
        prompt: geminiPrompt,
        json: (turn, b, ctx) => geminiResponse(turn, b, ctx, render),
        events: (turn, b, ctx, error) => geminiEvents(turn, b, ctx, render, error),
        // Its signatures are kept as it renders them (`issued`).
        seals: () => [],
      };
      return answer(res, renderer, { ...geminiBody, stream: streamed }, scripted, step, seed, signatures);
    }
    sendError(res, path, 404, `No route for ${req.method} ${path}`, 'not_found');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The mock model is not listening on a TCP port');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    geminiBaseURL: `${url}/v1beta`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** How one protocol renders a resolved turn; the protocol files hold the shapes, this file only routes. */
interface Renderer<B> {
  /** The answer's id for request `step`. */
  answerId(step: number): string;
  /** Prefix of generated tool call ids. */
  callIdPrefix: string;
  /** The request text the usage estimate counts. */
  prompt(body: B): string;
  json(turn: ResolvedTurn, body: B, context: RenderContext): unknown;
  events(turn: ResolvedTurn, body: B, context: RenderContext, streamError: MockTurn['streamError']): SseMessage[];
  /** What the answer seals its reasoning with, which only this server will take back (signatures, encrypted content). */
  seals(json: unknown): string[];
}

const renderers: {
  chat: Renderer<ChatRequestBody>;
  responses: Renderer<ResponsesRequestBody>;
  messages: Renderer<MessagesRequestBody>;
} = {
  chat: {
    answerId: (step) => `chatcmpl-mock-${step}`,
    callIdPrefix: 'call_',
    prompt: (body) => JSON.stringify(body.messages),
    json: chatCompletion,
    events: chatEvents,
    seals: () => [],
  },
  responses: {
    answerId: (step) => `resp_mock_${step}`,
    callIdPrefix: 'call_',
    prompt: responsesPrompt,
    json: responseObject,
    events: responsesEvents,
    seals: encryptedContents,
  },
  messages: {
    answerId: (step) => `msg_mock_${step}`,
    callIdPrefix: 'toolu_',
    prompt: messagesPrompt,
    json: messageObject,
    events: messagesEvents,
    seals: thinkingSeals,
  },
};

async function turnFor(script: MockScript, context: MockScriptContext): Promise<MockTurn> {
  if (typeof script === 'function') return script(context.body, context);
  const turn = script[context.step - 1];
  if (!turn) throw new Error(`The script has no turn for request ${context.step}`);
  return turn;
}

/** Sends the turn; resolves to the answer as JSON once it went out whole (undefined for an error or a cut-off). */
async function answer<B extends MockRequestBody>(
  res: ServerResponse,
  renderer: Renderer<B>,
  body: B,
  scripted: MockTurn,
  step: number,
  seed: number,
  sealed: Set<string>,
): Promise<unknown> {
  if (scripted.httpError) {
    const { status, body: errorBody } = scripted.httpError;
    if (errorBody !== undefined) sendJson(res, status, errorBody);
    else sendError(res, requestPath(res.req), status, `Scripted HTTP ${status}`);
    return undefined;
  }
  // Each request has its own seed, so a run replays exactly whatever the order of the protocols. The JSON answer
  // is rendered from its own generator, so the streamed form stays what it is without it.
  const created = Math.floor(Date.now() / 1000);
  const render = () => {
    const random = seededRandom(seed + step);
    const turn = resolveTurn(scripted, renderer.prompt(body), random, renderer.callIdPrefix);
    const context: RenderContext = { id: renderer.answerId(step), created, random };
    return { turn, context };
  };
  const whole = render();
  // Built for a stream too: it is the answer the server remembers (Responses' stored conversations).
  const json = renderer.json(whole.turn, body, whole.context);
  // Issued as the answer is made: a client that has the answer may send its seals back at once.
  for (const seal of renderer.seals(json)) sealed.add(seal);
  if (body.stream !== true) {
    sendJson(res, 200, json);
    return json;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  const { cutOff, chunkDelayMs } = scripted;
  const { turn, context } = render();
  const events = renderer.events(turn, body, context, scripted.streamError);
  // A negative count is taken from the end: -1 stops just before the last event, whatever the fragmenting.
  const cutAt = !cutOff ? Infinity : cutOff.afterChunks < 0 ? events.length + cutOff.afterChunks : cutOff.afterChunks;
  // Resolves once the last event written is handed to the socket.
  let flushed = Promise.resolve();
  for (const [sent, event] of events.entries()) {
    // A cut-off stops before the terminal event, so the client sees a stream that just ends (or breaks).
    if (sent >= cutAt) {
      if (!cutOff?.reset) res.end();
      else {
        // The events before the cut reach the client first, as when a connection drops mid-answer.
        await flushed;
        res.destroy();
      }
      return undefined;
    }
    if (chunkDelayMs) await sleep(chunkDelayMs);
    if (res.destroyed) return undefined;
    flushed = new Promise((resolve) => res.write(encodeSse(event), () => resolve()));
  }
  res.end();
  return scripted.streamError ? undefined : json;
}

function requestPath(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://localhost').pathname;
}

function sendJson(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** An error body in the shape of the protocol the path belongs to: Anthropic's on /v1/messages, OpenAI's elsewhere. */
function sendError(res: ServerResponse, path: string, status: number, message: string, type?: string) {
  if (path.startsWith('/v1beta/')) return sendJson(res, status, geminiError(status, message));
  if (path === '/v1/messages') return sendJson(res, status, messagesError(messagesErrorType(status), message));
  const standard = openAIErrorOf(status);
  sendJson(res, status, { error: { message, type: type ?? standard.type, param: null, code: type ? null : standard.code } });
}

/** The `type` and `code` OpenAI's API sends with a status (a 429 is a `requests` limit, a 5xx a `server_error`). */
function openAIErrorOf(status: number): { type: string; code: string | null } {
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status >= 500) return { type: 'server_error', code: null };
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  return { type: 'invalid_request_error', code: null };
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
