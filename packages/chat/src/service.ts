/**
 * ChatService: Chat Completions over a Transport. `streamChatCompletion` is the single-request streaming path,
 * exported so the tool loop can run one step with it.
 */
import { Ai4tsError, ApiError, isTool, ProtocolError, type RequestOptions, type Transport, toChatTool } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { z } from 'zod';
import { collectChatCompletion, readChatEvents, toAi4tsError } from './collect.js';
import type { ChatStreamListenerOptions } from './listener.js';
import { ChatStream } from './stream.js';
import { type ChatCompletion, type ChatCompletionRequest, ChatCompletionRequestSchema } from './types.js';

/** The endpoint, relative to the provider's baseURL. */
export const CHAT_COMPLETIONS_PATH = 'chat/completions';

/** Per-call options: the transport's overrides plus `thinkTags` (default true). */
export interface ChatRequestOptions extends RequestOptions, ChatStreamListenerOptions {}

/**
 * Request fields that configure the SDK (the tool loop's) and never go to the API. Function values (hooks) are
 * dropped as well.
 */
export const SDK_REQUEST_FIELDS: ReadonlySet<string> = new Set([
  'maxSteps',
  'passThroughToolCalls',
  'onStepFinish',
  'onToolCall',
  'prepareStep',
]);

/**
 * The request as the API receives it: SDK-only fields ({@link SDK_REQUEST_FIELDS}, functions, undefined values)
 * removed, tools made by `defineTool` converted to their JSON Schema form, everything else (OpenAI's fields and any
 * provider's own) kept. Never mutates `request`.
 * Validates `model` and `messages` with {@link ChatCompletionRequestSchema}; invalid input throws Ai4tsError.
 */
export function toWireRequest(request: ChatCompletionRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request)) {
    if (value === undefined || typeof value === 'function' || SDK_REQUEST_FIELDS.has(key)) continue;
    body[key] = key === 'tools' && Array.isArray(value) ? value.map((t) => (isTool(t) ? toChatTool(t) : t)) : value;
  }
  const checked = ChatCompletionRequestSchema.safeParse(body);
  if (!checked.success) {
    throw new Ai4tsError(`Invalid chat request:\n${z.prettifyError(checked.error)}`, { cause: checked.error });
  }
  return body;
}

/**
 * Sends one streaming request and returns its {@link ChatStream} (already running). The body gets `stream: true`
 * and, unless the caller set `stream_options` or the provider's preset says it does not accept them,
 * `stream_options: { include_usage: true }`. Throws Ai4tsError synchronously for an invalid request.
 */
export function streamChatCompletion(
  transport: Transport,
  request: ChatCompletionRequest,
  options: ChatRequestOptions = {},
): ChatStream {
  const body = toWireRequest(request);
  body.stream = true;
  if (body.stream_options === undefined && transport.provider.quirks.streamOptions) {
    body.stream_options = { include_usage: true };
  }
  const { thinkTags, ...requestOptions } = options;
  return new ChatStream(
    async (listener, signal) => {
      let events: AsyncIterable<SseEvent> | SseEvent[];
      try {
        const stream = await transport.stream(CHAT_COMPLETIONS_PATH, { body, options: { ...requestOptions, signal } });
        // Some servers ignore `stream: true` and answer one JSON completion: read it as a single event.
        const json = stream.response.headers.get('content-type')?.includes('application/json');
        events = json ? [{ event: 'message', data: await stream.response.text() }] : stream;
      } catch (error) {
        throw listener.fail(toAi4tsError(error, signal));
      }
      return readChatEvents(events, listener, signal);
    },
    { signal: options.signal, thinkTags },
  );
}

/** Chat Completions for one Transport (one provider). */
export class ChatService {
  constructor(readonly transport: Transport) {}

  /**
   * One non-streaming request. A server that answers `text/event-stream` anyway (some daemons always stream) is
   * read to the same completion; a 200 body holding `{error}` throws ApiError.
   */
  async create(request: ChatCompletionRequest, options: ChatRequestOptions = {}): Promise<ChatCompletion> {
    const body = toWireRequest(request);
    delete body.stream;
    delete body.stream_options;
    const { thinkTags, ...requestOptions } = options;
    const response = await this.transport.request(CHAT_COMPLETIONS_PATH, {
      method: 'POST',
      body,
      options: requestOptions,
    });
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('text/event-stream')) {
      return collectChatCompletion(response, { signal: options.signal, thinkTags });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw toAi4tsError(error, options.signal);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      throw new ProtocolError('The chat completion is not JSON', { cause, line: text });
    }
    if (isRecord(json) && json.error !== undefined && json.error !== null) throw ApiError.fromStreamError(json, undefined);
    if (!isRecord(json) || !Array.isArray(json.choices)) {
      throw new ProtocolError('The response is not a chat completion (no choices)', { line: text });
    }
    return json as unknown as ChatCompletion;
  }

  /** One streaming request; see {@link streamChatCompletion}. */
  stream(request: ChatCompletionRequest, options: ChatRequestOptions = {}): ChatStream {
    return streamChatCompletion(this.transport, request, options);
  }
}
