/**
 * The front door: one client per provider, with the four protocols behind one rule. `client.chat`,
 * `client.responses`, `client.messages` and `client.gemini` are the same {@link ProtocolClient}: a request whose `tools` hold a
 * `defineTool` tool, or that sets a loop field (`maxSteps`, `passThroughToolCalls`, `concurrency`, a hook, or a
 * structured `output` and its `repair`), runs the tool loop; any other request is one plain call. The second argument is the per-request options in
 * both modes (headers, timeouts, `signal`, `extraBody`), applied to every step of a loop.
 */
import {
  type ChatCompletion,
  type ChatCompletionCreateParams,
  type ChatLoopRequest,
  type ChatMessage,
  type ChatRequestOptions,
  ChatService,
  type ChatStream,
} from '@ai4ts/chat';
import {
  type ConverseLoopRequest,
  type ConverseRequest,
  type ConverseRequestOptions,
  type ConverseResponse,
  ConverseService,
  type ConverseStream,
  type Message as ConverseMessage,
} from '@ai4ts/converse';
import type * as z from 'zod';
import {
  isLoopRequest,
  type LoopCalls,
  type LoopFieldName,
  type LoopResumeOptions,
  type LoopState,
  type ModelContext,
  type LoopRequestShape,
  type OutputLoopStream,
  type RequestOptions,
  type RerankParams,
  type RerankResponse,
  rerank,
  type ToolLoopResult,
  type ToolLoopStream,
  Transport,
  type TransportOptions,
} from '@ai4ts/core';
import {
  type Content,
  type GeminiLoopRequest,
  type GeminiRequestOptions,
  GeminiService,
  type GeminiStream,
  type GenerateContentRequest,
  type GenerateContentResponse,
} from '@ai4ts/gemini';
import {
  type Message,
  type MessageCreateParams,
  type MessagesLoopRequest,
  type MessageParam,
  type MessagesRequestOptions,
  MessagesService,
  type MessagesStream,
} from '@ai4ts/messages';
import {
  type ResponseCreateParams,
  type ResponseInputItem,
  type ResponsesLoopRequest,
  type ResponseObject,
  type ResponsesRequestOptions,
  ResponsesService,
  type ResponsesStream,
} from '@ai4ts/responses';
import { EmbeddingsClient } from './embeddings.js';
import { translatedTransports } from './translate.js';

/** What a middleware sees of a Chat Completions request; `request` is the wire request. */
export interface ChatMiddlewareContext extends ModelContext {
  readonly protocol: 'chat';
  request: ChatCompletionCreateParams;
}

/** What a middleware sees of a Responses request. */
export interface ResponsesMiddlewareContext extends ModelContext {
  readonly protocol: 'responses';
  request: ResponseCreateParams;
}

/** What a middleware sees of a Messages request. */
export interface MessagesMiddlewareContext extends ModelContext {
  readonly protocol: 'messages';
  request: MessageCreateParams;
}

/**
 * What a middleware sees of a Gemini request: the request with its `model`, which is sent in the URL (a middleware
 * that changes it changes the URL).
 */
export interface GeminiMiddlewareContext extends ModelContext {
  readonly protocol: 'gemini';
  request: GenerateContentRequest;
}

/**
 * What a middleware sees of a Bedrock Converse request: the request with its `model`, which is sent in the URL (a
 * middleware that changes it changes the URL).
 */
export interface ConverseMiddlewareContext extends ModelContext {
  readonly protocol: 'converse';
  request: ConverseRequest;
}

/** The context of a model request, narrowed by `protocol`. */
export type MiddlewareContext =
  | ChatMiddlewareContext
  | ResponsesMiddlewareContext
  | MessagesMiddlewareContext
  | GeminiMiddlewareContext
  | ConverseMiddlewareContext;

/** The result of one model request: a chat completion, a response, a message, a Gemini or a Converse response. */
export type ModelResult = ChatCompletion | ResponseObject | Message | GenerateContentResponse | ConverseResponse;

/**
 * A middleware around each model request of every protocol ({@link Ai4ts.use}): change `ctx.request` (or replace
 * it) before `next()`, observe or rewrite the streamed events with `ctx.onEvent` / `ctx.transformEvents`, change the
 * result `next()` gives, or answer without calling `next()`. Return a result of `ctx.protocol`'s kind; `next()` may be
 * called once.
 */
export type Middleware = (ctx: MiddlewareContext, next: () => Promise<ModelResult>) => Promise<ModelResult>;

/** Options of {@link Ai4ts}: the provider preset, baseURL, apiKey, retries and timeouts of its Transport. */
export interface Ai4tsOptions extends TransportOptions {
  /**
   * Lets every protocol client reach the provider, whatever protocol the provider speaks: a client of a protocol it
   * does not serve (`chat` with `provider: 'anthropic'`) has its requests translated in this process by the gateway's
   * codecs, sent natively, and its answers translated back, streams and tool loops included. What cannot be carried
   * is named in `resultInfo(result).dropped` and a warning of the logger. Needs the `@ai4ts/gateway` package,
   * loaded on the first translated call. Off by default: a client of another protocol is sent to the provider's
   * URL as it is (an OpenAI-compatible endpoint, say). See docs/translation.md.
   */
  translate?: boolean;
}

/** A request that runs no loop: every loop field is absent. What the plain overloads accept. */
export type PlainRequest<Request> = Request & { readonly [K in LoopFieldName]?: undefined };

/** What one protocol brings to a {@link ProtocolClient}: its service's plain calls and loop calls. */
export interface ProtocolCalls<Request, LoopRequest, Options, Final, Stream, Message>
  extends LoopCalls<LoopRequest, Final, Message, Options> {
  create(request: Request, options?: Options): Promise<Final>;
  stream(request: Request, options?: Options): Stream;
}

/** @deprecated Renamed {@link ProtocolCalls} (a protocol's definition is `CHAT_PROTOCOL` and its kin); goes in the next release. */
export type ProtocolDefinition<Request, LoopRequest, Options, Final, Stream, Message> = ProtocolCalls<
  Request,
  LoopRequest,
  Options,
  Final,
  Stream,
  Message
>;

/**
 * One protocol behind the front door's rule (see the module comment). The overloads type what runs: a plain
 * request gives the protocol's result and stream, a loop request the loop's result and stream.
 */
export class ProtocolClient<
  Request extends LoopRequestShape,
  LoopRequest extends LoopRequestShape,
  Options,
  Final,
  Stream,
  Message,
> {
  readonly #protocol: ProtocolCalls<Request, LoopRequest, Options, Final, Stream, Message>;

  /** @param protocol A protocol's service (`ChatService`, `ResponsesService`, `MessagesService`, ...). */
  constructor(protocol: ProtocolCalls<Request, LoopRequest, Options, Final, Stream, Message>) {
    this.#protocol = protocol;
  }

  /** One plain request; resolves to the protocol's result. */
  create(request: PlainRequest<Request>, options?: Options): Promise<Final>;
  /** Structured output (through the loop): resolves to its result, `object` validated by the `output` schema. */
  create<S extends z.ZodType>(
    request: LoopRequest & { output: S },
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Final, Message, z.output<S>>>;
  /** Runs the tool loop to its end; resolves to its result (`text`, `messages`, `steps`, `usage`). */
  create(request: LoopRequest, options?: Options): Promise<ToolLoopResult<LoopRequest, Final, Message>>;
  create(
    request: Request | LoopRequest,
    options?: Options,
  ): Promise<Final | ToolLoopResult<LoopRequest, Final, Message>> {
    return runsPlain<Request, LoopRequest>(request)
      ? this.#protocol.create(request, options)
      : this.#protocol.runLoop(request, options);
  }

  /** One plain streaming request; its handle is running already. */
  stream(request: PlainRequest<Request>, options?: Options): Stream;
  /** Structured output (through the loop): `object` events as the answer streams, `final()` with the object. */
  stream<S extends z.ZodType>(
    request: LoopRequest & { output: S },
    options?: Options,
  ): OutputLoopStream<LoopRequest, Final, Message, z.output<S>>;
  /** Starts the tool loop as one step-tagged event stream; `final()` resolves to the loop's result. */
  stream(request: LoopRequest, options?: Options): ToolLoopStream<LoopRequest, Final, Message>;
  stream(request: Request | LoopRequest, options?: Options): Stream | ToolLoopStream<LoopRequest, Final, Message> {
    return runsPlain<Request, LoopRequest>(request)
      ? this.#protocol.stream(request, options)
      : this.#protocol.streamLoop(request, options);
  }

  /**
   * Continues a suspended tool loop (a result with `status: 'awaiting_approval'` or `'awaiting_tool_results'`) from its
   * `state`, on any process: `approvals` and `toolResults` answer exactly its pending calls, `tools` (and any other
   * loop field: `stopWhen`, `maxSteps`, hooks) are the loop's settings given again. Resolves like `create` with a
   * loop request; rejects with a LoopStateError, before anything runs, for a state that does not check out.
   *
   * @example
   * const result = await client.chat.create({ model, messages, tools: [transfer] });
   * if (result.status === 'awaiting_approval') await save(JSON.stringify(result.state));
   * // later, anywhere:
   * await client.chat.resume(JSON.parse(await load()), { approvals: { [id]: true }, tools: [transfer] });
   */
  resume(
    state: LoopState<LoopRequest, Message>,
    resume: LoopResumeOptions<LoopRequest, Final>,
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Final, Message>> {
    return this.#protocol.resumeLoop(state, resume, options);
  }

  /** {@link ProtocolClient.resume} as a stream, like `stream` with a loop request: the resumed step's tool results, then the next steps. */
  streamResume(
    state: LoopState<LoopRequest, Message>,
    resume: LoopResumeOptions<LoopRequest, Final>,
    options?: Options,
  ): ToolLoopStream<LoopRequest, Final, Message> {
    return this.#protocol.streamResumeLoop(state, resume, options);
  }
}

/** The front door's one rule, as a guard: a request without `defineTool` tools and loop fields is plain. */
function runsPlain<Request extends LoopRequestShape, LoopRequest extends LoopRequestShape>(
  request: Request | LoopRequest,
): request is Request {
  return !isLoopRequest(request);
}

/** Chat Completions behind the front door. */
export type ChatClient = ProtocolClient<
  ChatCompletionCreateParams,
  ChatLoopRequest,
  ChatRequestOptions,
  ChatCompletion,
  ChatStream,
  ChatMessage
>;

/** Anthropic Messages behind the front door. */
export type MessagesClient = ProtocolClient<
  MessageCreateParams,
  MessagesLoopRequest,
  MessagesRequestOptions,
  Message,
  MessagesStream,
  MessageParam
>;

/** Gemini's native `generateContent` behind the front door. */
export type GeminiClient = ProtocolClient<
  GenerateContentRequest,
  GeminiLoopRequest,
  GeminiRequestOptions,
  GenerateContentResponse,
  GeminiStream,
  Content
>;

/** Amazon Bedrock's Converse API behind the front door (a `bedrock()` preset). */
export type ConverseClient = ProtocolClient<
  ConverseRequest,
  ConverseLoopRequest,
  ConverseRequestOptions,
  ConverseResponse,
  ConverseStream,
  ConverseMessage
>;

/** OpenAI Responses behind the front door, with the Responses API's own calls beside `create` and `stream`. */
export class ResponsesClient extends ProtocolClient<
  ResponseCreateParams,
  ResponsesLoopRequest,
  ResponsesRequestOptions,
  ResponseObject,
  ResponsesStream,
  ResponseInputItem
> {
  /** The plain service: `resume`, `retrieve` and `delete` of stored and background responses. */
  readonly service: ResponsesService;

  constructor(transport: Transport) {
    const service = new ResponsesService(transport);
    super(service);
    this.service = service;
  }
}

/**
 * An ai4ts client for one provider.
 *
 * @example
 * const client = new Ai4ts({ provider: 'deepseek' });
 * const result = await client.chat.create({ model, messages, tools: [getWeather] });
 * console.log(result.text);
 */
export class Ai4ts {
  /** The transport every protocol shares. */
  readonly transport: Transport;
  /** OpenAI Chat Completions. */
  readonly chat: ChatClient;
  /** OpenAI Responses. */
  readonly responses: ResponsesClient;
  /** Anthropic Messages. */
  readonly messages: MessagesClient;
  /** Gemini's native API (`provider: 'gemini'`). */
  readonly gemini: GeminiClient;
  /**
   * Amazon Bedrock's Converse API (`provider: bedrock({ region })`): every Bedrock model in one request shape. Always
   * the provider's own endpoint: `translate` does not carry it.
   */
  readonly converse: ConverseClient;
  /** OpenAI's `/embeddings` (every OpenAI-compatible preset): `create` and `embedMany`. */
  readonly embeddings: EmbeddingsClient;

  /** The transport of each protocol client: `transport`, or one that translates (`translate`). */
  readonly #transports: Transport[];

  constructor(options: Ai4tsOptions = {}) {
    const { translate, ...transportOptions } = options;
    const transport = new Transport(transportOptions);
    this.transport = transport;
    const of = translate ? translatedTransports(transportOptions, transport) : () => transport;
    const transports = { chat: of('chat'), responses: of('responses'), messages: of('messages'), gemini: of('gemini') };
    this.#transports = [...new Set([transport, ...Object.values(transports)])];
    this.chat = new ProtocolClient(new ChatService(transports.chat));
    this.responses = new ResponsesClient(transports.responses);
    this.messages = new ProtocolClient(new MessagesService(transports.messages));
    this.gemini = new ProtocolClient(new GeminiService(transports.gemini));
    this.converse = new ProtocolClient(new ConverseService(transport));
    // Embeddings and rerank are no protocol a translation could carry: always the provider's own endpoints.
    this.embeddings = new EmbeddingsClient(transport);
  }

  /**
   * Ranks `documents` by relevance to `query` on a Cohere/Jina-style `/rerank` (Cohere, Jina, vLLM): the results
   * most relevant first, each with its place in `documents` and its score; `topN` keeps the best ones.
   */
  rerank(params: RerankParams, options?: RequestOptions): Promise<RerankResponse> {
    return rerank(this.transport, params, options);
  }

  /**
   * Adds a middleware around each later model request of every protocol: plain, streamed, and each step of a tool
   * loop. The first added runs outermost. See docs/observability.md for a logger, a cache and a content filter.
   */
  use(middleware: Middleware): this {
    for (const transport of this.#transports) transport.use(middleware);
    return this;
  }
}

/** Creates an {@link Ai4ts} client. */
export function createClient(options: Ai4tsOptions = {}): Ai4ts {
  return new Ai4ts(options);
}
