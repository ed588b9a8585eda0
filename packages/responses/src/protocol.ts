/**
 * The Responses API, defined once ({@link RESPONSES_PROTOCOL}): everything the service, the front door, the
 * gateway and the scripted server know of this protocol comes from here.
 */
import { ProtocolError } from '@ai4ts/core';
import { isRecord, type ProtocolDefinition } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { ResponsesStreamListener } from './listener.js';
import { type ResponsesLoopRequest, responsesLoopTurns } from './loop.js';
import { isOutputItem, outputTextOf } from './merge.js';
import { RESPONSES_PATH, type ResponsesRequestOptions, toStreamBody, toWireRequest } from './request.js';
import { isResponseObject, ResponsesStream } from './stream.js';
import type { ResponseInputItem, ResponseObject, ResponseSnapshot } from './types.js';
import { RESPONSES_REQUEST_FIELDS } from './types.js';

/** The definition of the Responses API. */
export type ResponsesProtocol = ProtocolDefinition<
  ResponsesLoopRequest,
  ResponseObject,
  ResponseInputItem,
  ResponsesStreamListener,
  ResponsesStream,
  ResponsesRequestOptions
>;

/** OpenAI Responses: typed stream events with sequence numbers, a response object at the end. */
export const RESPONSES_PROTOCOL: ResponsesProtocol = {
  name: 'responses',
  path: RESPONSES_PATH,
  requestFields: RESPONSES_REQUEST_FIELDS,
  summarize: (response) => ({
    id: response.id,
    model: response.model,
    finishReasons: [toFinishReason(response)],
    usage: response.usage ? toChatUsage(response.usage) : undefined,
    output: response.output,
  }),
  isResult: isResponseObject,
  toWireRequest,
  // A create with `stream: true` is read as a stream (the answer is SSE): the body is sent as the caller wrote it.
  createBody: (wire) => wire,
  streamBody: toStreamBody,
  createListener: () => new ResponsesStreamListener(),
  parseCreated: (json) => toResponseObject(json),
  acceptsJsonStream: false,
  loopTurns: responsesLoopTurns,
  Stream: ResponsesStream,
};

/** A parsed JSON body checked to be a response object, with `output_text` added. */
export function toResponseObject(body: unknown): ResponseObject {
  if (!isResponseBody(body)) {
    throw new ProtocolError('The Responses API answered with something that is not a response object', {
      line: JSON.stringify(body),
    });
  }
  return { ...body, output_text: outputTextOf(body.output) };
}

/** Checked cheaply: the `output` items the SDK reads; the other fields are the server's word. */
function isResponseBody(value: unknown): value is ResponseSnapshot {
  return (
    isRecord(value) &&
    Array.isArray(value.output) &&
    value.output.every((item: unknown) => isRecord(item) && isOutputItem(item))
  );
}
