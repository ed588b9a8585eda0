/** `client.responses`: create, stream, retrieve, delete and resume OpenAI Responses over a shared Transport. */
import type * as z from 'zod';
import { type OutputLoopStream, ProtocolError, type Transport } from '@ai4ts/core';
import {
  callOptionsOf,
  hasOutput,
  isRecord,
  runOutputRequest,
  sendCreate,
  streamOutputRequest,
  withOwnSignal,
} from '@ai4ts/core/internal';
import { ResponseStreamListener } from './listener.js';
import { isOutputItem, outputTextOf } from './merge.js';
import { RESPONSES_PATH, type ResponseRequestOptions, toWireRequest } from './request.js';
import {
  type ResponseLoopRequest,
  type ResponsesToolLoopResult,
  type ResponsesToolLoopStream,
  responsesToolLoopAdapter,
} from './loop.js';
import { RESPONSES_PROTOCOL, ResponseStream, streamResponse } from './stream.js';
import type { ResponseCreateRequest, ResponseInputItem, ResponseObject, ResponseSnapshot } from './types.js';

/** Options of {@link ResponsesService.resume}. */
export interface ResumeOptions {
  /** The last `sequence_number` already received; default: the last one in `events`, else the whole stream. */
  startingAfter?: number;
  /**
   * The trace received before the interruption (a listener's `events`, or a recorded JSONL file): it is replayed
   * first, so the resumed stream's response holds the items that began before the cut.
   */
  events?: Iterable<unknown>;
}

/**
 * The Responses API over a {@link Transport}: plain requests (the tool loop is `runResponsesToolLoop`).
 *
 * @example
 * const responses = new ResponsesService(new Transport());
 * const stream = responses.stream({ model: 'gpt-5', input: 'Hi' }).on('content', (e) => process.stdout.write(e.delta));
 * const response = await stream.final();
 */
export class ResponsesService {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Creates a response and resolves to it. A server that answers with `text/event-stream` (a request with
   * `stream: true`, or a gateway that always streams) is read to the final response transparently. Rejects with an
   * `Ai4tsError` for an invalid request, the typed `ApiError` for an HTTP error or a 200 `{ error }` body, a
   * `ProtocolError` for a body that is not a response object; a streamed answer fails as `collectResponse` does.
   *
   * With `output` (a zod object schema), the request asks for JSON of that schema and resolves to the loop's
   * result for one step: `object` is the validated answer, `completion` the response (see
   * docs/structured-output.md; no tool runs and there is no `repair`, which need the tool loop).
   */
  create<S extends z.ZodType>(
    request: ResponseCreateRequest & { output: S },
    options?: ResponseRequestOptions,
  ): Promise<ResponsesToolLoopResult<z.output<S>>>;
  create(request: ResponseCreateRequest, options?: ResponseRequestOptions): Promise<ResponseObject>;
  async create(
    request: ResponseCreateRequest & { output?: z.ZodType },
    options: ResponseRequestOptions = {},
  ): Promise<ResponseObject | ResponsesToolLoopResult> {
    if (hasOutput(request)) return runOutputRequest(responsesToolLoopAdapter(this.#transport, options), request, options.signal);
    const body = toWireRequest(request);
    return sendCreate(this.#transport, RESPONSES_PROTOCOL, RESPONSES_PATH, body, callOptionsOf(request, options), {
      listener: () => new ResponseStreamListener(),
      parse: toResponseObject,
    });
  }

  /**
   * Starts a streamed response now and returns its handle: iterate it (or listen to it) for the normalized
   * events, listen to `event` for the raw ones, or just await `.final()`. Throws an `Ai4tsError` synchronously
   * for an invalid request. With `output`: the loop's stream for one step, with `object` events and a typed
   * `object` in `final()`.
   */
  stream<S extends z.ZodType>(
    request: ResponseCreateRequest & { output: S },
    options?: ResponseRequestOptions,
  ): OutputLoopStream<ResponseLoopRequest, ResponseObject, ResponseInputItem, z.output<S>>;
  stream(request: ResponseCreateRequest, options?: ResponseRequestOptions): ResponseStream;
  stream(
    request: ResponseCreateRequest & { output?: z.ZodType },
    options: ResponseRequestOptions = {},
  ): ResponseStream | ResponsesToolLoopStream {
    if (hasOutput(request)) return streamOutputRequest(responsesToolLoopAdapter(this.#transport, options), request, options.signal);
    return streamResponse(this.#transport, request, options);
  }

  /**
   * Resumes the stream of a background response (`background: true`) after an interruption:
   * `GET /responses/{id}?stream=true&starting_after=N`. A trace that already failed rejects `final()` with its
   * error without a request.
   */
  resume(responseId: string, resume: ResumeOptions = {}, options: ResponseRequestOptions = {}): ResponseStream {
    const listener = new ResponseStreamListener();
    try {
      for (const event of resume.events ?? []) listener.push(event);
    } catch {
      // The listener holds the recorded error; the handle below rejects with it.
    }
    const failed = listener.error;
    const startingAfter = resume.startingAfter ?? listener.lastSequenceNumber;
    const query: Record<string, string> = { ...options.query, stream: 'true' };
    if (startingAfter !== undefined) query.starting_after = String(startingAfter);
    const path = `${RESPONSES_PATH}/${encodeURIComponent(responseId)}`;
    const { signal, ...requestOptions } = options;
    return new ResponseStream(
      listener,
      (attempt) =>
        failed
          ? Promise.reject(failed)
          : this.#transport.stream(path, { method: 'GET', options: { ...requestOptions, query, ...attempt } }),
      signal,
    );
  }

  /** Fetches a stored response. Rejects like `create`. */
  async retrieve(responseId: string, options: ResponseRequestOptions = {}): Promise<ResponseObject> {
    const path = `${RESPONSES_PATH}/${encodeURIComponent(responseId)}`;
    return toResponseObject(await this.#transport.json<unknown>(path, { method: 'GET', options }));
  }

  /** Deletes a stored response. Rejects with the typed `ApiError` of an HTTP error. */
  async delete(responseId: string, options: ResponseRequestOptions = {}): Promise<void> {
    const path = `${RESPONSES_PATH}/${encodeURIComponent(responseId)}`;
    await withOwnSignal(options.signal, async (signal) => {
      const response = await this.#transport.request(path, { method: 'DELETE', options: { ...options, signal } });
      await response.text(); // a small JSON acknowledgement: read it so the connection is reused
    });
  }
}

/** A parsed JSON body checked to be a response object, with `output_text` added. */
function toResponseObject(body: unknown): ResponseObject {
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
