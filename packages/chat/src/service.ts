/**
 * Chat Completions over a Transport: {@link ChatService} (core's `ProtocolService` of {@link CHAT_PROTOCOL}) and the
 * function forms of its calls.
 */
import type { Transport } from '@ai4ts/core';
import { ProtocolService, serviceFunctions } from '@ai4ts/core/internal';
import type { ChatStreamListener } from './listener.js';
import type { ChatLoopRequest } from './loop.js';
import { CHAT_PROTOCOL } from './protocol.js';
import type { ChatRequestOptions } from './request.js';
import type { ChatStream } from './stream.js';
import type { ChatCompletion, ChatCompletionCreateParams, ChatMessage } from './types.js';

/**
 * Chat Completions for one Transport (one provider): `create`, `stream`, `runLoop` and `streamLoop`, with retry,
 * middleware, telemetry and cost wired by core. A server that answers `text/event-stream` to `create` (some daemons
 * always stream) is read through the same listener as `stream()`, with the provider's quirks.
 */
export class ChatService extends ProtocolService<
  ChatCompletionCreateParams,
  ChatLoopRequest,
  ChatCompletion,
  ChatMessage,
  ChatStreamListener,
  ChatStream,
  ChatRequestOptions
> {
  constructor(transport: Transport) {
    super(CHAT_PROTOCOL, transport);
  }
}

const functions = serviceFunctions((transport) => new ChatService(transport));

/**
 * Sends one streaming request and returns its {@link ChatStream}, already running (see
 * `ChatService.stream`). Throws Ai4tsError synchronously for an invalid request; every later failure rejects
 * `final()`.
 */
export const streamChatCompletion = functions.stream;

/**
 * The adapter of the tool loop over Chat Completions for core's `runToolLoop`; `options` apply to every step. Make
 * one per loop.
 */
export const chatToolLoopAdapter = functions.loopAdapter;

/**
 * Runs the tool loop over Chat Completions to the end. The loop's settings come from the request alone: its
 * `defineTool` tools, `maxSteps`, `passThroughToolCalls`, `concurrency`, hooks and structured `output` (never sent
 * to the API; with `output`, the result's `object` has the schema's type). `options` apply to every step's
 * request, and `options.signal` aborts the loop.
 *
 * Rejects with an Ai4tsError whose `partial` is a `ToolLoopPartial` (the finished steps, the transcript so far and
 * the failed step's partial completion); an AbortError when `options.signal` aborts.
 */
export const runChatToolLoop = functions.run;

/**
 * Starts the tool loop over Chat Completions as one event stream over all steps (see {@link runChatToolLoop} for the
 * request and the options); it starts now, whether or not anyone iterates, and `final()` resolves to the result or
 * rejects like {@link runChatToolLoop}.
 */
export const streamChatToolLoop = functions.streamLoop;

/**
 * Continues a suspended tool loop over Chat Completions from its state (see `ProtocolService.resumeLoop`): the decisions on its
 * pending calls and the loop's settings in `resume`. Rejects with a LoopStateError for a state that does not check out.
 */
export const resumeChatToolLoop = functions.resume;

/** {@link resumeChatToolLoop} as one event stream over the resumed steps. */
export const streamResumeChatToolLoop = functions.streamResume;
