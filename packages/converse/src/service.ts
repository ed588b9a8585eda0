/**
 * Converse over a Transport: {@link ConverseService} (core's `ProtocolService` of {@link CONVERSE_PROTOCOL}) and the
 * function forms of its calls.
 */
import type { Transport } from '@ai4ts/core';
import { ProtocolService, serviceFunctions } from '@ai4ts/core/internal';
import type { ConverseStreamListener } from './listener.js';
import type { ConverseLoopRequest } from './loop.js';
import { CONVERSE_PROTOCOL } from './protocol.js';
import type { ConverseRequestOptions } from './request.js';
import type { ConverseStream } from './stream.js';
import type { ConverseRequest, ConverseResponse, Message } from './types.js';

/**
 * Bedrock's Converse API over a Transport (`new Transport({ provider: bedrock({ region }) })`): `create`, `stream`,
 * `runLoop` and `streamLoop`, with retry, middleware, telemetry and cost wired by core.
 */
export class ConverseService extends ProtocolService<
  ConverseRequest,
  ConverseLoopRequest,
  ConverseResponse,
  Message,
  ConverseStreamListener,
  ConverseStream,
  ConverseRequestOptions
> {
  constructor(transport: Transport) {
    super(CONVERSE_PROTOCOL, transport);
  }
}

const functions = serviceFunctions((transport) => new ConverseService(transport));

/**
 * Sends one streaming request and returns its {@link ConverseStream}, already running. Throws Ai4tsError
 * synchronously for an invalid request; every later failure rejects `final()`.
 */
export const converseStream = functions.stream;

/** The adapter of the tool loop over Converse for core's `runToolLoop`; `options` apply to every step. One per loop. */
export const converseToolLoopAdapter = functions.loopAdapter;

/**
 * Runs the tool loop over Converse to the end. Its settings come from the request (`tools`, `maxSteps`,
 * `passThroughToolCalls`, `concurrency`, the hooks); `options` are the per-request options of every step.
 *
 * @throws (rejects with) Ai4tsError for an invalid request (at the first step), RangeError for a bad `maxSteps`, and
 * every step's typed error; its `partial` is a `ToolLoopPartial`.
 */
export const runConverseToolLoop = functions.run;

/** Starts the tool loop over Converse as one event stream over all steps, each event tagged with its step. */
export const streamConverseToolLoop = functions.streamLoop;
