/**
 * Anthropic Messages over a Transport: {@link MessagesService} (core's `ProtocolService` of
 * {@link MESSAGES_PROTOCOL}) and the function forms of its calls.
 */
import type { Transport } from '@ai4ts/core';
import { ProtocolService, serviceFunctions } from '@ai4ts/core/internal';
import type { MessagesStreamListener } from './listener.js';
import type { MessagesLoopRequest } from './loop.js';
import { MESSAGES_PROTOCOL } from './protocol.js';
import type { MessagesRequestOptions } from './request.js';
import type { MessagesStream } from './stream.js';
import type { Message, MessageCreateParams, MessageParam } from './types.js';

/**
 * The Messages API over a Transport for an Anthropic-style API (`new Transport({ provider: 'anthropic' })`):
 * `create`, `stream`, `runLoop` and `streamLoop`, with retry, middleware, telemetry and cost wired by core. A server
 * that answers `create` with SSE is collected transparently.
 */
export class MessagesService extends ProtocolService<
  MessageCreateParams,
  MessagesLoopRequest,
  Message,
  MessageParam,
  MessagesStreamListener,
  MessagesStream,
  MessagesRequestOptions
> {
  constructor(transport: Transport) {
    super(MESSAGES_PROTOCOL, transport);
  }
}

const functions = serviceFunctions((transport) => new MessagesService(transport));

/**
 * Sends one streaming request and returns its {@link MessagesStream}, already running (see
 * `MessagesService.stream`). Throws Ai4tsError synchronously for an invalid request; every later failure rejects
 * `final()`.
 */
export const streamMessage = functions.stream;

/**
 * The adapter of the tool loop over Anthropic Messages for core's `runToolLoop`; `options` apply to every step. Make
 * one per loop.
 */
export const messagesToolLoopAdapter = functions.loopAdapter;

/**
 * Runs the tool loop over Anthropic Messages to the end. Its settings come from the request (`tools`, `maxSteps`,
 * `passThroughToolCalls`, `concurrency`, the hooks, `output`, whose schema types the result's `object`); `options`
 * are the per-request options of every step, and `options.signal` aborts the loop. A tool_use whose input is not
 * valid JSON never runs: the model gets an `is_error` tool_result.
 *
 * @throws (rejects with) Ai4tsError for an invalid request (at the first step), RangeError for a bad `maxSteps`,
 * and every step's typed error; its `partial` is a `ToolLoopPartial` (the finished steps, the transcript, and the
 * failed step's partial message).
 */
export const runMessagesToolLoop = functions.run;

/**
 * Starts the tool loop over Anthropic Messages as one event stream over all steps, each event tagged with its
 * step (see {@link runMessagesToolLoop} for the settings and the errors, which reject `final()`).
 */
export const streamMessagesToolLoop = functions.streamLoop;

/**
 * Continues a suspended tool loop over Messages from its state (see `ProtocolService.resumeLoop`): the decisions on its
 * pending calls and the loop's settings in `resume`. Rejects with a LoopStateError for a state that does not check out.
 */
export const resumeMessagesToolLoop = functions.resume;

/** {@link resumeMessagesToolLoop} as one event stream over the resumed steps. */
export const streamResumeMessagesToolLoop = functions.streamResume;
