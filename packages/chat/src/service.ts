/** ChatService: Chat Completions over a Transport, one plain request at a time (`create` and `stream`). */
import type * as z from 'zod';
import { type OutputLoopStream, ProtocolError, type Transport } from '@ai4ts/core';
import { callOptionsOf, hasOutput, runOutputRequest, sendCreate, streamOutputRequest } from '@ai4ts/core/internal';
import { ChatStreamListener } from './listener.js';
import { type ChatLoopRequest, type ChatToolLoopResult, type ChatToolLoopStream, chatToolLoopAdapter } from './loop.js';
import { CHAT_PROTOCOL, type ChatStream, isChatCompletion, streamChatCompletion } from './stream.js';
import { CHAT_COMPLETIONS_PATH, type ChatRequestOptions, toWireRequest } from './request.js';
import type { ChatCompletion, ChatCompletionRequest, ChatMessage } from './types.js';

/** Chat Completions for one Transport (one provider). The tool loop is `runChatToolLoop` / `streamChatToolLoop`. */
export class ChatService {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * One non-streaming request: `toWireRequest`'s body without `stream` or `stream_options`. Returns the
   * provider's JSON completion as is. A server that answers `text/event-stream` anyway (some daemons always
   * stream) is read through a {@link ChatStreamListener} to the same completion `stream().final()` would give.
   *
   * Rejects with Ai4tsError for an invalid request; the Transport's ApiError for an HTTP error; ApiError for a 200
   * body holding `{error}`; ProtocolError for a body that is not JSON or not a completion (no `choices`);
   * ConnectionError or AbortError when the read breaks. Only errors of a streamed answer carry a `partial`.
   *
   * With `output` (a zod object schema), the request asks for JSON of that schema and resolves to the loop's
   * result for one step: `object` is the validated answer, `completion` the completion (see
   * docs/structured-output.md; no tool runs and there is no `repair`, which need the tool loop).
   */
  create<S extends z.ZodType>(
    request: ChatCompletionRequest & { output: S },
    options?: ChatRequestOptions,
  ): Promise<ChatToolLoopResult<z.output<S>>>;
  create(request: ChatCompletionRequest, options?: ChatRequestOptions): Promise<ChatCompletion>;
  async create(
    request: ChatCompletionRequest & { output?: z.ZodType },
    options: ChatRequestOptions = {},
  ): Promise<ChatCompletion | ChatToolLoopResult> {
    if (hasOutput(request)) return runOutputRequest(chatToolLoopAdapter(this.#transport, options), request, options.signal);
    const body = toWireRequest(request, this.#transport.provider.quirks);
    delete body.stream;
    delete body.stream_options;
    const { thinkTags, ...requestOptions } = callOptionsOf(request, options);
    return sendCreate(this.#transport, CHAT_PROTOCOL, CHAT_COMPLETIONS_PATH, body, requestOptions, {
      listener: () => new ChatStreamListener({ thinkTags }),
      parse: parseCompletion,
    });
  }

  /**
   * One streaming request; see {@link streamChatCompletion}. Throws Ai4tsError synchronously for an invalid request.
   * With `output`: the loop's stream for one step, with `object` events and a typed `object` in `final()`.
   */
  stream<S extends z.ZodType>(
    request: ChatCompletionRequest & { output: S },
    options?: ChatRequestOptions,
  ): OutputLoopStream<ChatLoopRequest, ChatCompletion, ChatMessage, z.output<S>>;
  stream(request: ChatCompletionRequest, options?: ChatRequestOptions): ChatStream;
  stream(
    request: ChatCompletionRequest & { output?: z.ZodType },
    options: ChatRequestOptions = {},
  ): ChatStream | ChatToolLoopStream {
    if (hasOutput(request)) return streamOutputRequest(chatToolLoopAdapter(this.#transport, options), request, options.signal);
    return streamChatCompletion(this.#transport, request, options);
  }
}

/** The cheap check of a JSON answer: an object with `choices`. */
function parseCompletion(json: unknown, text: string): ChatCompletion {
  // The provider's completion is returned as sent; only its `choices` array is checked.
  if (!isChatCompletion(json)) {
    throw new ProtocolError('The response is not a chat completion (no choices)', { line: text });
  }
  return json;
}
