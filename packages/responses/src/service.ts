/**
 * The Responses API over a Transport: {@link ResponsesService} (core's `ProtocolService` of
 * {@link RESPONSES_PROTOCOL}, plus `resume`, `retrieve` and `delete`) and the function forms of its calls.
 */
import type { Transport } from '@ai4ts/core';
import { ProtocolService, serviceFunctions, withOwnSignal } from '@ai4ts/core/internal';
import type { ResponsesStreamListener } from './listener.js';
import type { ResponsesLoopRequest } from './loop.js';
import { RESPONSES_PROTOCOL, toResponseObject } from './protocol.js';
import { RESPONSES_PATH, type ResponsesRequestOptions } from './request.js';
import type { ResponsesStream } from './stream.js';
import type { ResponseCreateParams, ResponseInputItem, ResponseObject } from './types.js';

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
 * The Responses API over a {@link Transport}: `create`, `stream`, `runLoop` and `streamLoop` with retry, middleware,
 * telemetry and cost wired by core, and the calls of stored and background responses.
 *
 * @example
 * const responses = new ResponsesService(new Transport());
 * const stream = responses.stream({ model: 'gpt-5', input: 'Hi' }).on('content', (e) => process.stdout.write(e.delta));
 * const response = await stream.final();
 */
export class ResponsesService extends ProtocolService<
  ResponseCreateParams,
  ResponsesLoopRequest,
  ResponseObject,
  ResponseInputItem,
  ResponsesStreamListener,
  ResponsesStream,
  ResponsesRequestOptions
> {
  constructor(transport: Transport) {
    super(RESPONSES_PROTOCOL, transport);
  }

  /**
   * Resumes the stream of a background response (`background: true`) after an interruption:
   * `GET /responses/{id}?stream=true&starting_after=N`. The handle is a model call like every other (retried before
   * its first event, traced, priced, seen by middleware). A trace that already failed rejects `final()` with its
   * error without a request.
   */
  resume(responseId: string, resume: ResumeOptions = {}, options: ResponsesRequestOptions = {}): ResponsesStream {
    const listener = this.definition.createListener(options, this.transport.provider.quirks);
    try {
      for (const event of resume.events ?? []) listener.push(event);
    } catch {
      // The listener holds the recorded error; the handle below rejects with it.
    }
    const failed = listener.error;
    const startingAfter = resume.startingAfter ?? listener.lastSequenceNumber;
    const query: Record<string, string> = { ...options.query, stream: 'true' };
    if (startingAfter !== undefined) query.starting_after = String(startingAfter);
    const path = responsePath(responseId);
    // A GET has no body: the call is watched with the response's id as its request.
    return this.openStream({ response_id: responseId }, options, listener, (call, sent) => (attempt) =>
      failed
        ? Promise.reject(failed)
        : this.transport.stream(path, { method: 'GET', options: { ...sent, query, ...attempt }, watch: call }),
    );
  }

  /** Fetches a stored response. Rejects like `create`. */
  async retrieve(responseId: string, options: ResponsesRequestOptions = {}): Promise<ResponseObject> {
    return toResponseObject(await this.transport.json<unknown>(responsePath(responseId), { method: 'GET', options }));
  }

  /** Deletes a stored response. Rejects with the typed `ApiError` of an HTTP error. */
  async delete(responseId: string, options: ResponsesRequestOptions = {}): Promise<void> {
    await withOwnSignal(options.signal, async (signal) => {
      const response = await this.transport.request(responsePath(responseId), {
        method: 'DELETE',
        options: { ...options, signal },
      });
      await response.text(); // a small JSON acknowledgement: read it so the connection is reused
    });
  }
}

function responsePath(responseId: string): string {
  return `${RESPONSES_PATH}/${encodeURIComponent(responseId)}`;
}

const functions = serviceFunctions((transport) => new ResponsesService(transport));

/**
 * Sends one streaming request and returns its {@link ResponsesStream}, already running (see
 * `ResponsesService.stream`). Throws Ai4tsError synchronously for an invalid request; every later failure rejects
 * `final()`.
 */
export const streamResponse = functions.stream;

/**
 * The adapter of the tool loop over the Responses API for core's `runToolLoop`; `options` apply to every step. Make
 * one per loop.
 */
export const responsesToolLoopAdapter = functions.loopAdapter;

/**
 * Runs the tool loop over the Responses API and resolves to its result. Its settings come from the request (the
 * `defineTool` tools in `tools`, the loop fields; with `output`, the result's `object` has the schema's type);
 * `options` apply to every step and `options.signal` aborts the loop. Rejects with a typed error whose `partial`
 * is a `ToolLoopPartial` (AbortError on abort).
 */
export const runResponsesToolLoop = functions.run;

/**
 * Starts the tool loop over the Responses API as one event stream over all steps, each event tagged with its
 * step; settings and options as for {@link runResponsesToolLoop}.
 */
export const streamResponsesToolLoop = functions.streamLoop;

/**
 * Continues a suspended tool loop over Responses from its state (see `ProtocolService.resumeLoop`): the decisions on its
 * pending calls and the loop's settings in `resume`. Rejects with a LoopStateError for a state that does not check out.
 */
export const resumeResponsesToolLoop = functions.resume;

/** {@link resumeResponsesToolLoop} as one event stream over the resumed steps. */
export const streamResumeResponsesToolLoop = functions.streamResume;
