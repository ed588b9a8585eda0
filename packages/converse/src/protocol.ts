/**
 * Bedrock's Converse API, defined once ({@link CONVERSE_PROTOCOL}): everything the service and the front door know
 * of this protocol comes from here.
 */
import type { ProtocolDefinition } from '@ai4ts/core/internal';
import { ProtocolError } from '@ai4ts/core';
import { toChatUsage, toFinishReason } from './convert.js';
import { ConverseStreamListener } from './listener.js';
import { type ConverseLoopRequest, converseLoopTurns } from './loop.js';
import { CONVERSE_PATH, type ConverseRequestOptions, converseEndpoint, toRequestBody, toWireRequest } from './request.js';
import { ConverseStream, isConverseResponse } from './stream.js';
import { CONVERSE_REQUEST_FIELDS, type ConverseResponse, type Message } from './types.js';

/** The definition of Bedrock's Converse API. */
export type ConverseProtocol = ProtocolDefinition<
  ConverseLoopRequest,
  ConverseResponse,
  Message,
  ConverseStreamListener,
  ConverseStream,
  ConverseRequestOptions
>;

/**
 * Converse: the model in the URL (`/model/{model}/converse`, `/converse-stream`), one request shape for every
 * Bedrock model, streams as AWS event-stream frames (the preset's framing turns each into an SSE event named by its
 * `:event-type`). No structured `output` yet (refused, see `toWireRequest`).
 */
export const CONVERSE_PROTOCOL: ConverseProtocol = {
  name: 'converse',
  path: CONVERSE_PATH,
  requestFields: CONVERSE_REQUEST_FIELDS,
  endpoint: converseEndpoint,
  // Converse answers carry neither an id nor the model's name.
  summarize: (response) => ({
    id: undefined,
    model: undefined,
    finishReasons: response.stopReason ? [toFinishReason(response.stopReason)] : [],
    usage: response.usage ? toChatUsage(response.usage) : undefined,
    output: [response.output.message],
  }),
  isResult: isConverseResponse,
  toWireRequest,
  createBody: toRequestBody,
  streamBody: toRequestBody,
  createListener: () => new ConverseStreamListener(),
  parseCreated: readCreated,
  acceptsJsonStream: false,
  loopTurns: converseLoopTurns,
  Stream: ConverseStream,
};

/** A `/converse` answer, checked cheaply: `output.message.content` an array and a `stopReason`. */
function readCreated(json: unknown, text: string): ConverseResponse {
  if (!isConverseResponse(json) || typeof json.stopReason !== 'string') {
    throw new ProtocolError('The response is not a Converse response', { line: text });
  }
  return json;
}
