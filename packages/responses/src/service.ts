/** `client.responses`: create, stream, retrieve, delete and resume OpenAI Responses over a shared Transport. */
import { AbortError, Ai4tsError, ConnectionError, ProtocolError, type RequestOptions, type Transport } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { z } from 'zod';
import { collectResponse } from './collect.js';
import { ResponseStreamListener } from './listener.js';
import { ResponseStream, runResponseStream } from './stream.js';
import type { OutputItem, ResponseObject } from './types.js';

const PATH = '/responses';

/** A `POST /responses` body. Fields beyond these pass through unchanged. */
export interface ResponseCreateRequest {
  model: string;
  input?: string | Record<string, unknown>[];
  instructions?: string;
  tools?: Record<string, unknown>[];
  tool_choice?: unknown;
  previous_response_id?: string;
  store?: boolean;
  /** Runs the response in the background; its stream can be resumed with {@link ResponsesService.resume}. */
  background?: boolean;
  max_output_tokens?: number;
  reasoning?: { effort?: string; summary?: string; [key: string]: unknown };
  stream?: boolean;
  [key: string]: unknown;
}

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

/** Options of {@link streamResponse}: the per-call request options and the listener to feed. */
export interface StreamResponseOptions extends RequestOptions {
  /** Receives every event (attach handlers to it first); default a fresh listener. */
  listener?: ResponseStreamListener;
}

/** The checks a request gets before it is sent: cheap, and the rest is the API's to judge. */
const requestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]).optional(),
  tools: z.array(z.record(z.string(), z.unknown())).optional(),
  previous_response_id: z.string().optional(),
  store: z.boolean().optional(),
  stream: z.boolean().optional(),
});

/**
 * The Responses API over a {@link Transport}.
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
   * `stream: true`, or a gateway that always streams) is read to the final response transparently.
   */
  async create(request: ResponseCreateRequest, options: RequestOptions = {}): Promise<ResponseObject> {
    const body = checkRequest(request);
    const response = await this.#transport.request(PATH, { method: 'POST', body, options });
    if (response.headers.get('content-type')?.includes('text/event-stream')) {
      return collectResponse(response, options.signal ? { signal: options.signal } : {});
    }
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      if (options.signal?.aborted) throw new AbortError('The request was aborted', { cause: options.signal.reason });
      throw new ConnectionError('The connection broke while reading the response', { cause });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (cause) {
      throw new ProtocolError('The Responses API answered with a body that is not JSON', { cause, line: text });
    }
    return toResponseObject(parsed);
  }

  /**
   * Starts a streamed response now and returns its handle: iterate it (or listen to it) for the normalized
   * events (`content`, `tool_call.done`, ...), listen to `event` for the raw ones, or just await `.final()`.
   */
  stream(request: ResponseCreateRequest, options: RequestOptions = {}): ResponseStream {
    const body = { ...checkRequest(request), stream: true };
    return new ResponseStream(
      (listener, signal) =>
        runResponseStream(this.#transport, PATH, { method: 'POST', body, options: { ...options, signal } }, listener),
      options.signal,
    );
  }

  /**
   * Resumes the stream of a background response (`background: true`) after an interruption:
   * `GET /responses/{id}?stream=true&starting_after=N`.
   */
  resume(responseId: string, resume: ResumeOptions = {}, options: RequestOptions = {}): ResponseStream {
    const listener = new ResponseStreamListener();
    for (const event of resume.events ?? []) listener.push(event);
    const startingAfter = resume.startingAfter ?? listener.lastSequenceNumber;
    const query: Record<string, string> = { ...options.query, stream: 'true' };
    if (startingAfter !== undefined) query.starting_after = String(startingAfter);
    const path = `/responses/${encodeURIComponent(responseId)}`;
    return new ResponseStream(
      (target, signal) =>
        runResponseStream(this.#transport, path, { method: 'GET', options: { ...options, query, signal } }, target),
      options.signal,
      listener,
    );
  }

  /** Fetches a stored response. */
  async retrieve(responseId: string, options: RequestOptions = {}): Promise<ResponseObject> {
    const path = `/responses/${encodeURIComponent(responseId)}`;
    return toResponseObject(await this.#transport.json<unknown>(path, { method: 'GET', options }));
  }

  /** Deletes a stored response. */
  async delete(responseId: string, options: RequestOptions = {}): Promise<void> {
    const path = `/responses/${encodeURIComponent(responseId)}`;
    const response = await this.#transport.request(path, { method: 'DELETE', options });
    await response.text(); // a small JSON acknowledgement: read it so the connection is reused
  }
}

/**
 * One streamed request to its final response: the single step a tool loop repeats. Attach handlers (or the
 * loop's event forwarding) to `options.listener` before calling; errors carry the partial response.
 */
export async function streamResponse(
  transport: Transport,
  request: ResponseCreateRequest,
  options: StreamResponseOptions = {},
): Promise<ResponseObject> {
  const { listener = new ResponseStreamListener(), ...requestOptions } = options;
  const body = { ...checkRequest(request), stream: true };
  return runResponseStream(transport, PATH, { method: 'POST', body, options: requestOptions }, listener);
}

function checkRequest(request: ResponseCreateRequest): ResponseCreateRequest {
  const result = requestSchema.safeParse(request);
  if (!result.success) {
    throw new Ai4tsError(`Invalid Responses request: ${z.prettifyError(result.error)}`, { cause: result.error });
  }
  return request;
}

/** A parsed JSON body checked cheaply to be a response object, with `output_text` added. */
function toResponseObject(body: unknown): ResponseObject {
  if (!isRecord(body) || !Array.isArray(body.output)) {
    throw new ProtocolError('The Responses API answered with something that is not a response object', {
      line: JSON.stringify(body),
    });
  }
  return { ...body, output_text: outputText(body.output as OutputItem[]) } as ResponseObject;
}

function outputText(output: OutputItem[]): string {
  let text = '';
  for (const item of output) {
    if (item?.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content) if (part?.type === 'output_text') text += part.text;
  }
  return text;
}
