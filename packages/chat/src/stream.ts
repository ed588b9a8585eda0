/**
 * ChatStream: one streaming Chat Completions request, and `streamChatCompletion`, the single streamed step the
 * service and the tool loop both use.
 */
import { ListenerStream, type Transport } from '@ai4ts/core';
import { callOptionsOf, isRecord, type ModelProtocol } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { type ChatStreamEvents, ChatStreamListener } from './listener.js';
import { CHAT_COMPLETIONS_PATH, type ChatRequestOptions, toWireRequest } from './request.js';
import type { ChatCompletion, ChatCompletionRequest } from './types.js';

/**
 * A streaming chat request in flight: core's {@link ListenerStream}, with the rules of every stream handle. It
 * starts when created and buffers its events from the first; every `for await` yields them all (content,
 * reasoning, tool calls, usage, finish); leaving a loop early aborts a running request; `final()` resolves to the
 * completion or rejects with the typed error (`partial`: the completion so far, none when the request failed
 * before the first event). Chat's own `refusal` and `chunk` events, and `error`, come through `on()`;
 * `listener` holds the merged state at any moment.
 *
 * ```ts
 * const stream = chat.stream({ model, messages });
 * for await (const event of stream) if (event.type === 'content') process.stdout.write(event.delta);
 * const completion = await stream.final();
 * ```
 */
export class ChatStream extends ListenerStream<ChatStreamListener, ChatCompletion, ChatStreamEvents> {}

/** Whether a value is a ChatCompletion (a cheap shape check): narrows a middleware's `ModelResult`. */
export function isChatCompletion(value: unknown): value is ChatCompletion {
  return isRecord(value) && Array.isArray(value.choices);
}

/** How a span, a log line and the cost read a completion. */
export const CHAT_PROTOCOL: ModelProtocol<ChatCompletion> = {
  name: 'chat',
  summarize: (completion) => ({
    id: completion.id,
    model: completion.model,
    finishReasons: completion.choices.flatMap((choice) => (choice.finish_reason ? [choice.finish_reason] : [])),
    usage: completion.usage,
    output: completion.choices.map((choice) => choice.message),
  }),
  isResult: isChatCompletion,
};

/**
 * Sends one streaming request and returns its {@link ChatStream}, already running. The body is
 * `toWireRequest`'s plus `stream: true` and, unless the caller set `stream_options` or the provider's preset
 * says it does not accept them, `stream_options: { include_usage: true }`. A server that ignores `stream: true` and
 * answers one JSON completion is read through the same listener.
 *
 * @throws Ai4tsError synchronously for an invalid request. Every later failure rejects `final()` (see
 *   {@link ChatStream}); an HTTP error is the Transport's typed ApiError, without a `partial`.
 */
export function streamChatCompletion(
  transport: Transport,
  request: ChatCompletionRequest,
  options: ChatRequestOptions = {},
): ChatStream {
  return streamWireBody(transport, toWireRequest(request, transport.provider.quirks), callOptionsOf(request, options));
}

/** {@link streamChatCompletion} for a body already built by `toWireRequest` (the tool loop's). Not public. */
export function streamWireBody(
  transport: Transport,
  wire: Record<string, unknown>,
  options: ChatRequestOptions,
): ChatStream {
  const body: Record<string, unknown> = { ...wire, stream: true };
  if (body.stream_options === undefined && transport.provider.quirks.streamOptions) {
    body.stream_options = { include_usage: true };
  }
  const { thinkTags, signal, ...requestOptions } = options;
  const call = transport.call(CHAT_PROTOCOL, body, requestOptions);
  return new ChatStream(
    new ChatStreamListener({ thinkTags, finishOnDone: transport.provider.quirks.doneWithoutFinishReason }),
    async (attempt) => {
      const stream = await transport.stream(CHAT_COMPLETIONS_PATH, {
        body: call.body,
        options: { ...requestOptions, ...attempt },
        watch: call,
      });
      // Some servers ignore `stream: true` and answer one JSON completion: read it as a single event.
      const json = stream.response.headers.get('content-type')?.includes('application/json');
      return json ? wholeBody(stream.response) : stream;
    },
    signal,
    transport.streamRetry(requestOptions),
    call,
  );
}

/** A JSON body as one SSE event; a read that breaks is readInto's to report, like a broken stream. */
async function* wholeBody(response: Response): AsyncGenerator<SseEvent> {
  yield { event: 'message', data: await response.text() };
}
