/**
 * `POST /messages` over a Transport: one-shot `create` and live `stream`.
 */
import type { Transport } from '@ai4ts/core';
import { callOptionsOf, sendCreate } from '@ai4ts/core/internal';
import { MessageStreamListener } from './listener.js';
import { readCreatedMessage } from './parse.js';
import { MESSAGES_PATH, type MessageRequestOptions, toWireRequest } from './request.js';
import { MESSAGES_PROTOCOL, type MessageStream, streamMessage } from './stream.js';
import type { Message, MessageCreateParams } from './types.js';

/** The Messages API: `create` for the whole message, `stream` to watch it arrive. Plain requests only. */
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
   */
  async create(request: MessageCreateParams, options: MessageRequestOptions = {}): Promise<Message> {
    const body = { ...toWireRequest(request), stream: false };
    return sendCreate(this.#transport, MESSAGES_PROTOCOL, MESSAGES_PATH, body, callOptionsOf(request, options), {
      listener: () => new MessageStreamListener(),
      parse: readCreatedMessage,
    });
  }

  /**
   * Starts a streaming request now and returns its {@link MessageStream} (see `streamMessage`).
   *
   * @throws Ai4tsError synchronously for an invalid request; later failures reject `final()`.
   */
  stream(request: MessageCreateParams, options: MessageRequestOptions = {}): MessageStream {
    return streamMessage(this.#transport, request, options);
  }
}
