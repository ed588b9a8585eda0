/**
 * `POST /messages` over a Transport: one-shot `create` and live `stream`.
 */
import type * as z from 'zod';
import type { OutputLoopStream, Transport } from '@ai4ts/core';
import { callOptionsOf, hasOutput, runOutputRequest, sendCreate, streamOutputRequest } from '@ai4ts/core/internal';
import { MessageStreamListener } from './listener.js';
import { readCreatedMessage } from './parse.js';
import { MESSAGES_PATH, type MessageRequestOptions, toWireRequest } from './request.js';
import { MESSAGES_PROTOCOL, type MessageStream, streamMessage } from './stream.js';
import {
  type MessageLoopRequest,
  type MessagesToolLoopResult,
  type MessagesToolLoopStream,
  messagesToolLoopAdapter,
} from './loop.js';
import type { Message, MessageCreateParams, MessageParam } from './types.js';

/** The Messages API: `create` for the whole message, `stream` to watch it arrive. The tool loop is `runMessagesToolLoop`. */
export class MessagesService {
  /** Give it a Transport for an Anthropic-style API, e.g. `new Transport({ provider: 'anthropic' })`. */
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Sends a non-streaming request (`stream: false`) and resolves to the message. A server that answers with SSE
   * anyway is collected transparently (the errors of `collectMessage`).
   *
   * @throws (rejects with) Ai4tsError for an invalid request, the Transport's typed ApiError for an HTTP error or
   * a 200 body holding `{ error }`, ProtocolError for a body that is not a message, ConnectionError or AbortError
   * when reading it breaks. No `partial`, except from a collected SSE answer (the message so far).
   *
   * With `output` (a zod object schema), the request asks for JSON of that schema (natively or as a forced tool,
   * see `outputMode`) and resolves to the loop's result for one step: `object` is the validated answer,
   * `completion` the message (see docs/structured-output.md; no tool runs and there is no `repair`, which need
   * the tool loop).
   */
  create<S extends z.ZodType>(
    request: MessageCreateParams & { output: S },
    options?: MessageRequestOptions,
  ): Promise<MessagesToolLoopResult<z.output<S>>>;
  create(request: MessageCreateParams, options?: MessageRequestOptions): Promise<Message>;
  async create(
    request: MessageCreateParams & { output?: z.ZodType },
    options: MessageRequestOptions = {},
  ): Promise<Message | MessagesToolLoopResult> {
    if (hasOutput(request)) return runOutputRequest(messagesToolLoopAdapter(this.#transport, options), request, options.signal);
    const body = { ...toWireRequest(request), stream: false };
    return sendCreate(this.#transport, MESSAGES_PROTOCOL, MESSAGES_PATH, body, callOptionsOf(request, options), {
      listener: () => new MessageStreamListener(),
      parse: readCreatedMessage,
    });
  }

  /**
   * Starts a streaming request now and returns its {@link MessageStream} (see `streamMessage`).
   *
   * @throws Ai4tsError synchronously for an invalid request; later failures reject `final()`. With `output`: the
   * loop's stream for one step, with `object` events and a typed `object` in `final()`.
   */
  stream<S extends z.ZodType>(
    request: MessageCreateParams & { output: S },
    options?: MessageRequestOptions,
  ): OutputLoopStream<MessageLoopRequest, Message, MessageParam, z.output<S>>;
  stream(request: MessageCreateParams, options?: MessageRequestOptions): MessageStream;
  stream(
    request: MessageCreateParams & { output?: z.ZodType },
    options: MessageRequestOptions = {},
  ): MessageStream | MessagesToolLoopStream {
    if (hasOutput(request)) return streamOutputRequest(messagesToolLoopAdapter(this.#transport, options), request, options.signal);
    return streamMessage(this.#transport, request, options);
  }
}
