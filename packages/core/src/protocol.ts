/**
 * One protocol, defined once. A protocol package (chat, responses, messages, ...) exports one
 * {@link ProtocolDefinition}: its path, its wire body, the only constructor of its listener, how a JSON answer is
 * checked, how a result is summarized, and the message half of its tool-loop adapter. {@link ProtocolService}
 * turns a definition and a Transport into `create`, `stream`, `runLoop`, `streamLoop` and their resumed forms
 * (`resumeLoop`, `streamResumeLoop`), with retry, middleware,
 * telemetry and cost wired here, once: no protocol can forget one of them, and no two can wire them differently.
 */
import type * as z from 'zod';
import type { SseEvent } from '@ai4ts/sse';
import type { ModelCall, ModelProtocol } from './observe/call.js';
import { type Endpoint, endpointOf, type Route, sendCreate } from './internal/create.js';
import { unknownFields } from './internal/fields.js';
import { outputOf } from './output/output.js';
import type { OutputLoopStream } from './tools/stream.js';
import { forwardStep, type OpenEvents, type RetryEvent, type StreamEventSource } from './stream.js';
import type { NormalizedEvent } from './events.js';
import type { StreamListener } from './listener.js';
import {
  resumeToolLoop,
  runToolLoop,
  type ToolLoopAdapter,
  type ToolLoopOptions,
  type ToolLoopResult,
} from './tools/loop.js';
import {
  callOptionsOf,
  type LoopFields,
  type LoopRequestShape,
  type LoopResumeOptions,
  loopOptionsOf,
  type SdkFields,
  stateRequestOf,
} from './tools/request.js';
import { streamResumeToolLoop, streamToolLoop, type ToolLoopStream } from './tools/stream.js';
import type { LoopState } from './tools/suspend.js';
import type { ProviderQuirks } from './transport/providers.js';
import type { RetryPolicy } from './transport/retry.js';
import type { RequestOptions, Transport } from './transport/transport.js';

/** Where a streamed step's events go: the loop engine's `emit`. */
export type StepEmit = (event: NormalizedEvent | RetryEvent) => void;

/**
 * The message half of a protocol's tool-loop adapter (see {@link ToolLoopAdapter}: everything but `send` and
 * `telemetry`, which {@link ProtocolService} supplies), plus the hooks a protocol needs around each step's send.
 * Made once per loop ({@link ProtocolDefinition.loopTurns}), so it may remember what the server already holds.
 */
export interface LoopTurns<LoopRequest, Final, Message>
  extends Omit<ToolLoopAdapter<LoopRequest, Final, Message>, 'send' | 'telemetry'> {
  /** The request a step sends, from the loop's (Responses continues a stored conversation by id). */
  stepRequest?(request: LoopRequest): LoopRequest;
  /** Where a step's events go, from the loop's `emit` (Messages shows a forced output tool's input as content). */
  stepEmit?(request: LoopRequest, emit: StepEmit): StepEmit;
  /** A step's result arrived for `request` (the loop's, before {@link stepRequest}). */
  stepDone?(request: LoopRequest, final: Final): void;
  /**
   * The step `sent` (from the loop's `request`) failed before any event with `error`: the request to send once
   * instead (Responses resends the whole conversation to a server that does not know its stored one), or undefined
   * to fail the step.
   */
  stepFailed?(request: LoopRequest, sent: LoopRequest, error: unknown): LoopRequest | undefined;
}

/** What {@link ProtocolDefinition.Stream} is: a stream handle of the protocol, made over its listener. */
export type StreamHandleClass<Listener, Final, Stream> = new (
  listener: Listener,
  open: OpenEvents,
  signal?: AbortSignal,
  retry?: RetryPolicy,
  call?: ModelCall<Final>,
) => Stream;

/** What a protocol's stream handle offers the tool loop: its events, its retries and its result. */
export type StepHandle<Final> = StreamEventSource & {
  on(event: 'retry', handler: (event: RetryEvent) => void): unknown;
  final(): Promise<Final>;
};

/**
 * Everything about one protocol. `LoopRequest` is a request as the tool loop carries it (a plain request, the vendor
 * SDK's create params, is one), `Final` the result, `Message` a transcript entry, `Listener` the state machine that
 * folds the stream, `Stream` the handle, `Options` the per-request options.
 */
export interface ProtocolDefinition<LoopRequest, Final, Message, Listener, Stream, Options extends RequestOptions>
  extends ModelProtocol<Final> {
  /**
   * The endpoint, relative to the provider's baseURL (`/chat/completions`); a template when {@link endpoint} fills it
   * from the request (`/models/{model}:generateContent`).
   */
  readonly path: string;
  /**
   * The fields of the protocol's request type (its wire fields and `telemetry`): with the loop's fields, what a
   * request may name (`strictRequests`). A record typed by the request type's keys, so the compiler keeps it whole.
   */
  readonly requestFields: ReadonlySet<string>;
  /**
   * Where one request goes when that depends on the request (Gemini: the model is in the path, not the body, and a
   * stream is another method with `alt=sse`): its path, query and the body the API receives, from the request as the
   * middleware left it (which still has the model, for middleware, spans and cost), streamed or not. Absent:
   * {@link path}, no query, the request as the body.
   */
  endpoint?(request: Record<string, unknown>, stream: boolean): Endpoint;
  /**
   * The body the API receives, without `stream`: SDK fields left off, `defineTool` tools in the protocol's wire form,
   * a structured `output` asked for the protocol's way. Throws Ai4tsError for an invalid request.
   */
  toWireRequest(request: LoopRequest, quirks: ProviderQuirks): Record<string, unknown>;
  /** The wire body of a non-streaming request. */
  createBody(wire: Record<string, unknown>, quirks: ProviderQuirks): Record<string, unknown>;
  /** The wire body of a streaming request. */
  streamBody(wire: Record<string, unknown>, quirks: ProviderQuirks): Record<string, unknown>;
  /** The only place the protocol's listener is made: the call's options and the provider's quirks both apply. */
  createListener(options: Options | undefined, quirks: ProviderQuirks): Listener;
  /** Checks (cheaply) that a JSON answer is the protocol's result; throws ProtocolError when it is not. */
  parseCreated(json: unknown, text: string): Final;
  /** Reads a streamed request's JSON answer (a server that ignores `stream: true`) as one SSE event. */
  readonly acceptsJsonStream: boolean;
  /** The message half of the tool-loop adapter, made once per loop. */
  loopTurns(quirks: ProviderQuirks): LoopTurns<LoopRequest, Final, Message>;
  /** The protocol's stream handle. */
  readonly Stream: StreamHandleClass<Listener, Final, Stream>;
}

/**
 * A protocol over a {@link Transport}: what every protocol's service does, written once. `Request` is the plain
 * request, `LoopRequest` the tool loop's; a plain request with `output` runs the loop's engine for one step.
 */
export class ProtocolService<
  Request extends LoopRequest,
  LoopRequest extends LoopFields<LoopRequest, Final> & LoopRequestShape & SdkFields,
  Final,
  Message,
  Listener extends StreamListener<Final>,
  Stream extends StepHandle<Final>,
  Options extends RequestOptions,
> {
  /** The protocol this service speaks. */
  readonly definition: ProtocolDefinition<LoopRequest, Final, Message, Listener, Stream, Options>;
  /** The transport it sends through. */
  readonly transport: Transport;

  constructor(
    definition: ProtocolDefinition<LoopRequest, Final, Message, Listener, Stream, Options>,
    transport: Transport,
  ) {
    this.definition = definition;
    this.transport = transport;
  }

  /**
   * One non-streaming request; resolves to the provider's result as sent (checked cheaply by the definition). A
   * server that answers `text/event-stream` anyway is read through the protocol's listener to the same result.
   * With `output` (a zod object schema): the loop's result for one step, `object` the validated answer.
   *
   * Rejects with Ai4tsError for an invalid request, the Transport's ApiError for an HTTP error or a 200 `{ error }`
   * body, ProtocolError for a body that is not the protocol's result; only a streamed answer's errors carry `partial`.
   */
  create<S extends z.ZodType>(
    request: Request & { output: S },
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Final, Message, z.output<S>>>;
  create(request: Request, options?: Options): Promise<Final>;
  async create(request: Request, options?: Options): Promise<Final | ToolLoopResult<LoopRequest, Final, Message>> {
    this.#checkFields(request);
    if (outputOf(request)) return runToolLoop(this.loopAdapter(options), request, this.#outputStep(request, options));
    const { definition, transport } = this;
    const quirks = transport.provider.quirks;
    const body = definition.createBody(definition.toWireRequest(request, quirks), quirks);
    return sendCreate(transport, definition, routeOf(definition, false), body, callOptionsOf(request, options ?? {}), {
      listener: () => definition.createListener(options, quirks),
      parse: (json, text) => definition.parseCreated(json, text),
    });
  }

  /**
   * One streaming request, already running: its handle buffers every event, and `final()` resolves to the result or
   * rejects with the typed error (`partial`: the result so far). With `output`: the loop's stream for one step.
   *
   * @throws Ai4tsError synchronously for an invalid request.
   */
  stream<S extends z.ZodType>(
    request: Request & { output: S },
    options?: Options,
  ): OutputLoopStream<LoopRequest, Final, Message, z.output<S>>;
  stream(request: Request, options?: Options): Stream;
  stream(request: Request, options?: Options): Stream | ToolLoopStream<LoopRequest, Final, Message> {
    this.#checkFields(request);
    if (outputOf(request)) {
      return streamToolLoop(this.loopAdapter(options), request, this.#outputStep(request, options));
    }
    const wire = this.definition.toWireRequest(request, this.transport.provider.quirks);
    return this.#streamWire(wire, options, callOptionsOf(request, options ?? {}));
  }

  /** Runs the tool loop to its end; `options` apply to every step, `options.signal` aborts the loop. */
  runLoop<S extends z.ZodType>(
    request: LoopRequest & { output: S },
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Final, Message, z.output<S>>>;
  runLoop(request: LoopRequest, options?: Options): Promise<ToolLoopResult<LoopRequest, Final, Message>>;
  async runLoop(request: LoopRequest, options?: Options): Promise<ToolLoopResult<LoopRequest, Final, Message>> {
    this.#checkFields(request);
    return runToolLoop(this.loopAdapter(options), request, loopOptionsOf<LoopRequest, Final>(request, options?.signal));
  }

  /**
   * Continues a suspended loop (`status: 'awaiting_approval'` or `'awaiting_tool_results'`) from its `state`, on any
   * process: `resume.approvals` and `resume.toolResults` answer exactly its pending calls (a denied call goes to the
   * model as an error result), `resume.tools` and the other loop fields are the loop's settings given again.
   * Rejects with a LoopStateError, before anything runs, for a state of another protocol or version, a changed
   * state, or decisions that miss or add a call; otherwise resolves or rejects like {@link runLoop}.
   */
  resumeLoop(
    state: LoopState<LoopRequest, Message>,
    resume: LoopResumeOptions<LoopRequest, Final>,
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Final, Message>> {
    const settings = loopOptionsOf<LoopRequest, Final>(resume, options?.signal);
    return resumeToolLoop(this.loopAdapter(options), state, resume, settings);
  }

  /** Starts the tool loop as one step-tagged event stream; `final()` resolves or rejects like {@link runLoop}. */
  streamLoop<S extends z.ZodType>(
    request: LoopRequest & { output: S },
    options?: Options,
  ): OutputLoopStream<LoopRequest, Final, Message, z.output<S>>;
  streamLoop(request: LoopRequest, options?: Options): ToolLoopStream<LoopRequest, Final, Message>;
  streamLoop(request: LoopRequest, options?: Options): ToolLoopStream<LoopRequest, Final, Message> {
    this.#checkFields(request);
    return streamToolLoop(this.loopAdapter(options), request, loopOptionsOf<LoopRequest, Final>(request, options?.signal));
  }

  /**
   * {@link resumeLoop} as one step-tagged event stream: the resumed step's `tool.result` events, then the next
   * steps'. A state or decisions that do not check out reject `final()` with a LoopStateError.
   */
  streamResumeLoop(
    state: LoopState<LoopRequest, Message>,
    resume: LoopResumeOptions<LoopRequest, Final>,
    options?: Options,
  ): ToolLoopStream<LoopRequest, Final, Message> {
    const settings = loopOptionsOf<LoopRequest, Final>(resume, options?.signal);
    return streamResumeToolLoop(this.loopAdapter(options), state, resume, settings);
  }

  /** Each field the protocol, the loop and the SDK do not know: refused or warned about by the transport. */
  #checkFields(request: object): void {
    for (const { field, suggestion } of unknownFields(request, this.definition.requestFields)) {
      this.transport.unknownField(this.definition.name, field, suggestion);
    }
  }

  /**
   * The tool-loop adapter of one loop: each step one streamed request through {@link stream}'s path (so its
   * argument strings are kept exactly as streamed); `options` apply to every step, the loop's signal replacing theirs.
   */
  loopAdapter(options: Options | undefined): ToolLoopAdapter<LoopRequest, Final, Message> {
    const { definition, transport } = this;
    const turns = definition.loopTurns(transport.provider.quirks);
    const { stepRequest, stepEmit, stepDone, stepFailed, ...messages } = turns;
    return {
      ...messages,
      send: async (request, { signal, emit, telemetry }) => {
        const sendStep = (step: LoopRequest) => {
          const wire = definition.toWireRequest(step, transport.provider.quirks);
          const handle = this.#streamWire(wire, options, { ...options, signal, telemetry });
          return forwardStep(handle, emit && stepEmit ? stepEmit.call(turns, request, emit) : emit);
        };
        const step = stepRequest ? stepRequest.call(turns, request) : request;
        let final: Final;
        try {
          final = await sendStep(step);
        } catch (error) {
          const instead = stepFailed?.call(turns, request, step, error);
          if (instead === undefined) throw error;
          final = await sendStep(instead);
        }
        stepDone?.call(turns, request, final);
        return final;
      },
      telemetry: (requested) => transport.telemetry(options, requested),
      protocol: definition.name,
      stateRequest: stateRequestOf,
    };
  }

  /**
   * A stream handle over `open`, watched as one model call of `body` (its span, middleware, cost) and retried
   * before its first event by the Transport's policy. For a protocol's own streamed calls (a Responses resume).
   */
  openStream(
    body: Record<string, unknown>,
    options: RequestOptions,
    listener: Listener,
    open: (call: ModelCall<Final>, sent: RequestOptions) => OpenEvents,
  ): Stream {
    // The handle owns the signal: each attempt gets the handle's, which follows the caller's.
    const { signal, ...sent } = options;
    const call = this.transport.call(this.definition, body, sent);
    return new this.definition.Stream(listener, open(call, sent), signal, this.transport.streamRetry(sent), call);
  }

  /**
   * A plain request with `output`: the tool loop's engine for one step, so the answer is read exactly as the loop reads
   * its last one (`object` validated, `object` events while it streams, a refusal or an invalid answer as the same
   * typed errors). No tool runs: a call goes back to the caller (`finishReason: 'tool_calls'`), and `repair`, which
   * asks again, needs the loop.
   */
  #outputStep(request: LoopRequest, options: Options | undefined): ToolLoopOptions<LoopRequest, Final> {
    const step: ToolLoopOptions<LoopRequest, Final> = { maxSteps: 1, passThroughToolCalls: true };
    if (request.output !== undefined) step.output = request.output;
    if (request.telemetry !== undefined) step.telemetry = request.telemetry;
    if (options?.signal !== undefined) step.signal = options.signal;
    return step;
  }

  /**
   * One streamed request of a wire body already built: the service's and every loop step's. `options` are the
   * caller's (for the listener), `sent` what the request is sent with (a loop step's signal and telemetry in).
   */
  #streamWire(wire: Record<string, unknown>, options: Options | undefined, sent: RequestOptions): Stream {
    const { definition, transport } = this;
    const quirks = transport.provider.quirks;
    const body = definition.streamBody(wire, quirks);
    const listener = definition.createListener(options, quirks);
    const route = routeOf(definition, true);
    return this.openStream(body, sent, listener, (call, requestOptions) => async (attempt) => {
      const to = endpointOf(route, call.body, { ...requestOptions, ...attempt });
      const stream = await transport.stream(to.path, { body: to.body, options: to.options, watch: call });
      // Some servers ignore `stream: true` and answer one JSON result: read it as a single event.
      const type = stream.response.headers.get('content-type');
      const json = definition.acceptsJsonStream && type?.includes('application/json');
      return json ? wholeBody(stream.response) : stream;
    });
  }
}

/** A definition's route for a plain or a streamed request: its fixed path, or its endpoint of each request. */
function routeOf(
  definition: { path: string; endpoint?(request: Record<string, unknown>, stream: boolean): Endpoint },
  stream: boolean,
): Route {
  const { endpoint } = definition;
  return endpoint ? (request) => endpoint.call(definition, request, stream) : definition.path;
}

/** A JSON body as one SSE event; a read that breaks is readInto's to report, like a broken stream. */
async function* wholeBody(response: Response): AsyncGenerator<SseEvent> {
  yield { event: 'message', data: await response.text() };
}
