/**
 * Gemini over a Transport: {@link GeminiService} (core's `ProtocolService` of {@link GEMINI_PROTOCOL}) and the
 * function forms of its calls.
 */
import type { Transport } from '@ai4ts/core';
import { ProtocolService, serviceFunctions } from '@ai4ts/core/internal';
import type { GeminiStreamListener } from './listener.js';
import type { GeminiLoopRequest } from './loop.js';
import { GEMINI_PROTOCOL } from './protocol.js';
import type { GeminiRequestOptions } from './request.js';
import type { GeminiStream } from './stream.js';
import type { Content, GenerateContentRequest, GenerateContentResponse } from './types.js';

/**
 * Gemini's native API over a Transport (`new Transport({ provider: 'gemini' })`): `create`, `stream`, `runLoop` and
 * `streamLoop`, with retry, middleware, telemetry and cost wired by core.
 */
export class GeminiService extends ProtocolService<
  GenerateContentRequest,
  GeminiLoopRequest,
  GenerateContentResponse,
  Content,
  GeminiStreamListener,
  GeminiStream,
  GeminiRequestOptions
> {
  constructor(transport: Transport) {
    super(GEMINI_PROTOCOL, transport);
  }
}

const functions = serviceFunctions((transport) => new GeminiService(transport));

/**
 * Sends one streaming request and returns its {@link GeminiStream}, already running. Throws Ai4tsError synchronously
 * for an invalid request; every later failure rejects `final()`.
 */
export const streamGenerateContent = functions.stream;

/** The adapter of the tool loop over Gemini for core's `runToolLoop`; `options` apply to every step. One per loop. */
export const geminiToolLoopAdapter = functions.loopAdapter;

/**
 * Runs the tool loop over Gemini to the end. Its settings come from the request (`tools`, `maxSteps`,
 * `passThroughToolCalls`, `concurrency`, the hooks, `output`); `options` are the per-request options of every step.
 *
 * @throws (rejects with) Ai4tsError for an invalid request (at the first step), RangeError for a bad `maxSteps`, and
 * every step's typed error; its `partial` is a `ToolLoopPartial`.
 */
export const runGeminiToolLoop = functions.run;

/** Starts the tool loop over Gemini as one event stream over all steps, each event tagged with its step. */
export const streamGeminiToolLoop = functions.streamLoop;
