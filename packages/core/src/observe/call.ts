/**
 * One model request watched from start to end, whatever the protocol and whether streamed or not: its span and
 * metrics (when telemetry is on), its outcome's log line, its response's request id and headers, and its cost.
 * The Transport creates it ({@link Transport.call}); the stream handle, `readCreated` and the Transport's retries
 * report to it. With telemetry off it costs one object per request and nothing per event.
 */
import { Ai4tsError, ApiError, requestIdOf, TimeoutError } from '../errors.js';
import type { StreamEvent } from '../events.js';
import { abortError, redactHeaders } from '../internal/fail.js';
import { type Cost, costOf, type Prices, priceOf } from './cost.js';
import { failureMessage } from './failure.js';
import { bodyText, type Log } from './logger.js';
import type { EventEmitter } from 'eventemitter3';
import { type EventTransform, type ModelContext, type ModelMiddleware, runMiddleware, transformEmits } from './middleware.js';
import type { ModelSpan, ResultSummary, Telemetry } from './telemetry.js';

/** What the SDK knows of the HTTP response behind a result or a stream. */
export interface ResponseInfo {
  status: number;
  /** The response headers, every secret redacted from their values. */
  headers: Headers;
  /** The provider's request id (`x-request-id`, `request-id`), for support tickets and log correlation. */
  requestId: string | undefined;
  /**
   * The request fields a gateway, or the client's in-process translation (`translate: true`), could not carry to the
   * provider, as it named them in `x-ai4ts-dropped`; empty when nothing was dropped.
   */
  dropped: readonly string[];
}

/** The header in which a gateway names the request fields it could not carry to its upstream, comma-separated. */
export const DROPPED_HEADER = 'x-ai4ts-dropped';

function droppedOf(headers: Headers): string[] {
  const named = headers.get(DROPPED_HEADER);
  return named ? named.split(',').map((field) => field.trim()).filter(Boolean) : [];
}

/** What the SDK knows of a finished model call: its response, and its cost when the client has a price for the model. */
export interface ResultInfo extends ResponseInfo {
  cost: Cost | undefined;
  /**
   * How often a streamed answer was resumed after its connection was cut (a gateway's resumable stream, see
   * docs/gateway.md); 0 when it never was.
   */
  resumes: number;
}

const infos = new WeakMap<object, ResultInfo>();

/**
 * The request id, headers, status and cost of a result: a completion, response or message returned by `create`,
 * by a stream's `final()`, or in a tool loop's steps. Undefined for an object the SDK did not return.
 *
 * ```ts
 * const completion = await client.chat.create({ model, messages });
 * console.log(resultInfo(completion)?.requestId);
 * ```
 */
export function resultInfo(result: object): ResultInfo | undefined {
  return infos.get(result);
}

/** How a protocol's result is read for a span, a log line and its cost. */
export interface ModelProtocol<Final> {
  /** `chat`, `responses` or `messages`. */
  name: string;
  summarize(final: Final): ResultSummary;
  /** Whether a value (a middleware's answer) is this protocol's result: a cheap check of its shape. */
  isResult(value: unknown): value is Final;
}

/** What the Transport reports of each HTTP attempt of a model request. */
export interface RequestWatch {
  /** A retry is about to happen; `reason` is the error's class or the HTTP status. */
  retry(attempt: number, reason: string, delayMs: number, phase: 'headers' | 'stream'): void;
  /** A response with status < 400 arrived. */
  responded(response: Response): void;
  /** A cut stream is read on from a new connection; `resumes` counts them, this one included. */
  resumed(resumes: number): void;
}

/** What a {@link ModelCall} needs of its client. */
export interface CallContext {
  log: Log | undefined;
  /** Undefined when telemetry is off. */
  telemetry: (() => Telemetry | Promise<Telemetry>) | undefined;
  prices: Prices | undefined;
  secrets: readonly string[];
  middleware: readonly ModelMiddleware[];
  /** The call's signal: it ends the middleware chain too, wherever a middleware waits. */
  signal: AbortSignal | undefined;
  /** The call's `headers` timeout, in ms: how long the chain may take of its own before and after the request. */
  timeout: number | undefined;
}

/** One model request, from its first attempt to its result or failure. */
export class ModelCall<Final> implements RequestWatch {
  readonly #protocol: ModelProtocol<Final>;
  #body: Record<string, unknown>;
  readonly #context: CallContext;
  /** The middleware's event observers; undefined when none registered one. */
  #observers: ((event: StreamEvent) => void)[] | undefined;
  /** The middleware's event transforms, innermost first; undefined when none registered one. */
  #transforms: EventTransform[] | undefined;
  readonly #started = performance.now();
  #span: ModelSpan | undefined;
  #response: ResponseInfo | undefined;
  #resumes = 0;

  constructor(protocol: ModelProtocol<Final>, body: Record<string, unknown>, context: CallContext) {
    this.#protocol = protocol;
    this.#body = body;
    this.#context = context;
  }

  /** The last attempt's response, once its headers arrived. */
  get response(): ResponseInfo | undefined {
    return this.#response;
  }

  /** The body to send: the wire body, as the middleware left it. */
  get body(): Record<string, unknown> {
    return this.#body;
  }

  /**
   * True when a stream must report each event ({@link event}): a span times the first chunk, or a middleware
   * observes the events. False by default, so no event pays for what nobody watches.
   */
  get watchesEvents(): boolean {
    return this.#span !== undefined || this.#observers !== undefined;
  }

  /**
   * Makes the stream's listener emit its events through the middleware's transforms (see
   * {@link ModelContext.transformEvents}); nothing when no middleware registered one. Call once, after the chain
   * reached the request.
   */
  transformEvents<Events extends EventEmitter.ValidEventTypes>(listener: EventEmitter<Events>): void {
    if (this.#transforms) transformEmits(listener, this.#transforms);
  }

  /** One event of the streamed answer. */
  event(event: StreamEvent): void {
    this.#span?.chunk();
    if (this.#observers) for (const observe of this.#observers) observe(event);
  }

  /** Starts the span; a promise only the first time telemetry loads `@opentelemetry/api`, else nothing to wait for. */
  start(): Promise<void> | undefined {
    const resolve = this.#context.telemetry;
    if (!resolve) return undefined;
    const telemetry = resolve();
    if (!(telemetry instanceof Promise)) {
      this.#span = telemetry.startModel(this.#protocol.name, this.#body);
      return undefined;
    }
    return telemetry.then((loaded) => {
      this.#span = loaded.startModel(this.#protocol.name, this.#body);
    });
  }

  /** Runs a non-streamed call: {@link start}, the middleware around `send`, then {@link end} or {@link fail}. */
  async run(send: () => Promise<Final>): Promise<Final> {
    try {
      await this.start();
      return this.end(await this.through(send, false));
    } catch (error) {
      throw this.fail(error);
    }
  }

  /**
   * Runs the client's middleware around `send` (which sends {@link body}); resolves to the protocol's result, the
   * one `send` gave or one a middleware answered with. `signal` (default: the call's) and the call's headers
   * timeout end a chain that never answers (see {@link guardChain}).
   */
  async through(send: () => Promise<Final>, stream: boolean, signal = this.#context.signal): Promise<Final> {
    const { middleware } = this.#context;
    if (middleware.length === 0) return send();
    const ctx: ModelContext = {
      protocol: this.#protocol.name,
      request: this.#body,
      stream,
      onEvent: (observe) => {
        this.#observers ??= [];
        this.#observers.push(observe);
      },
      // Outer middleware register first: the inner ones' transforms see the wire's events before them.
      transformEvents: (transform) => {
        this.#transforms ??= [];
        this.#transforms.unshift(transform);
      },
    };
    const result = await guardChain(
      (sending) =>
        runMiddleware(middleware, ctx, () => {
          this.#body = { ...ctx.request };
          return sending(send);
        }),
      signal,
      this.#context.timeout,
    );
    if (!this.#protocol.isResult(result)) {
      throw new Ai4tsError(`A middleware returned something that is not a ${this.#protocol.name} result`);
    }
    return result;
  }

  retry(attempt: number, reason: string, delayMs: number, phase: 'headers' | 'stream'): void {
    this.#span?.retry(attempt, reason, delayMs, phase);
  }

  resumed(resumes: number): void {
    this.#resumes = resumes;
    this.#span?.resume(resumes);
  }

  responded(response: Response): void {
    const headers = redactHeaders(response.headers, this.#context.secrets);
    this.#response = { status: response.status, headers, requestId: requestIdOf(headers), dropped: droppedOf(headers) };
    this.#span?.response(response.status, this.#response.requestId);
  }

  /** The call succeeded: records its info and cost on `final`, ends the span, logs the outcome. */
  end(final: Final): Final {
    const { log, prices } = this.#context;
    const span = this.#span;
    const response = this.#response;
    const hasInfo = response !== undefined && typeof final === 'object' && final !== null;
    // Said once per call, whatever else is on: the answer came, but not to all the request asked.
    if (response?.dropped.length && log?.enabled('warn')) {
      const fields = { protocol: this.#protocol.name, model: modelOf(this.#body), dropped: response.dropped };
      log.write('warn', 'request fields dropped in translation', fields, this.#context.secrets);
    }
    if (!span && !log && !prices) {
      if (hasInfo) infos.set(final, { ...response, cost: undefined, resumes: this.#resumes });
      return final;
    }
    const summary = this.#protocol.summarize(final);
    const price = prices && priceOf(prices, summary.model ?? modelOf(this.#body));
    const cost = price && summary.usage ? costOf(summary.usage, price) : undefined;
    if (hasInfo) infos.set(final, { ...response, cost, resumes: this.#resumes });
    span?.end(summary, cost);
    this.#span = undefined;
    if (log?.enabled('info')) {
      const fields: Record<string, unknown> = {
        protocol: this.#protocol.name,
        model: summary.model ?? modelOf(this.#body),
        requestId: response?.requestId,
        durationMs: Math.round(performance.now() - this.#started),
        finishReasons: summary.finishReasons,
        usage: summary.usage && { input: summary.usage.prompt_tokens, output: summary.usage.completion_tokens },
      };
      if (cost) fields.cost = cost.total;
      log.write('info', 'model call completed', fields, this.#context.secrets);
      if (log.bodies) log.write('debug', 'model call result', { result: bodyText(final) }, this.#context.secrets);
    }
    return final;
  }

  /** The call failed: ends the span with the error, logs it, and returns it to throw. */
  fail<E>(error: E): E {
    this.#span?.fail(error);
    this.#span = undefined;
    const { log, secrets } = this.#context;
    if (log?.enabled('warn')) {
      // The message may quote the user's content (a provider's error body, a tool's throw): only with logBodies.
      const message = failureMessage(error, log.bodies, secrets);
      log.write(
        'warn',
        'model call failed',
        {
          protocol: this.#protocol.name,
          model: modelOf(this.#body),
          requestId: this.#response?.requestId ?? (error instanceof ApiError ? error.requestId : undefined),
          durationMs: Math.round(performance.now() - this.#started),
          error: error instanceof Error ? `${error.name}: ${message}` : message,
        },
        secrets,
      );
    }
    return error;
  }
}

/**
 * Runs a middleware chain so that it cannot outlive its call: the signal rejects it with the AbortError at any
 * moment, but while the request is out, where the request's own AbortError (with its `partial`) comes first; the
 * timeout (the call's `headers` wait) rejects it with a TimeoutError when the chain's own work, before the request
 * is sent or after it answered, takes longer. `chain` sends through `sending`, which marks the request out.
 */
function guardChain<T>(
  chain: (sending: <R>(send: () => Promise<R>) => Promise<R>) => Promise<T>,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
): Promise<T> {
  if (!signal && timeoutMs === undefined) return chain((send) => send());
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let out = false;
    let done = false;
    const settle = (finish: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      finish();
    };
    const onAbort = () => {
      if (!out && signal) settle(() => reject(abortError(signal)));
    };
    const arm = () => {
      if (timeoutMs === undefined || done) return;
      timer = setTimeout(() => settle(() => reject(new TimeoutError('headers', timeoutMs))), timeoutMs);
    };
    if (signal?.aborted) return reject(abortError(signal));
    signal?.addEventListener('abort', onAbort);
    arm();
    const sending = async <R>(send: () => Promise<R>): Promise<R> => {
      clearTimeout(timer);
      out = true;
      try {
        return await send();
      } finally {
        out = false;
        // After an abort the request's own error (with its partial) goes up the chain first; a chain that
        // swallows it still ends.
        if (signal?.aborted) setTimeout(onAbort, 0);
        else arm();
      }
    };
    chain(sending).then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

function modelOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('model' in body)) return undefined;
  return typeof body.model === 'string' ? body.model : undefined;
}
