/**
 * OpenTelemetry spans and metrics after the GenAI semantic conventions (gen_ai.* attributes, `chat {model}` client
 * spans, `execute_tool {name}` and `invoke_agent` internal spans, the `gen_ai.client.*` histograms). Only
 * `@opentelemetry/api` is used, an optional peer dependency loaded the first time telemetry is switched on: with
 * telemetry off nothing is loaded and nothing runs.
 */
import { Ai4tsError, ApiError } from '../errors.js';
import { isRecord } from '../errors.js';
import type { Usage } from '../events.js';
import { redact, redactJsonText } from '../internal/fail.js';
import type { Cost } from './cost.js';
import { failureException, failureMessage } from './failure.js';
import type {
  OtelApi,
  OtelAttributes as Attributes,
  OtelContext as Context,
  OtelHistogram as Histogram,
  OtelMeter as Meter,
  OtelSpan as Span,
  OtelTracer as Tracer,
} from './otel.js';

/** Telemetry settings, on the client or per request (a request's fields win over the client's). */
export interface TelemetryOptions {
  /** A `Tracer` of `@opentelemetry/api`. Default: `trace.getTracer('ai4ts')` of the registered tracer provider. */
  tracer?: Tracer;
  /** A `Meter` of `@opentelemetry/api`. Default: `metrics.getMeter('ai4ts')` of the registered meter provider. */
  meter?: Meter;
  /**
   * Record message content, system instructions, output, tool arguments and tool results on the spans. Off by
   * default: content is the users' data. API keys are never recorded.
   */
  recordContent?: boolean;
  /**
   * The context the spans start under (default: the active context). A server passes the context it extracted
   * from the inbound request's `traceparent`, so the model call's spans join the caller's trace.
   */
  parent?: Context;
}

let otel: OtelApi | undefined;
let loading: Promise<OtelApi> | undefined;

/**
 * The optional peer's name in a variable: bundlers (esbuild, Vite, webpack) leave a dynamic import of a non-literal
 * alone, so an app that never switches telemetry on neither bundles `@opentelemetry/api` nor fails to build
 * without it. Where bare names resolve at run time (Node, Deno, Bun, an import map) telemetry loads it as usual.
 */
const OTEL_API = '@opentelemetry/api';

/** `@opentelemetry/api`, loaded once; a clear error when it is not installed. */
export function loadOtel(): OtelApi | Promise<OtelApi> {
  if (otel) return otel;
  loading ??= import(/* webpackIgnore: true */ /* @vite-ignore */ OTEL_API).then(
    (api: OtelApi) => {
      otel = api;
      return api;
    },
    (cause: unknown) => {
      loading = undefined;
      throw new Ai4tsError('Telemetry needs the @opentelemetry/api package: npm install @opentelemetry/api', {
        cause,
      });
    },
  );
  return loading;
}

/** The GenAI `gen_ai.provider.name` of a preset: the conventions' well-known value where there is one. */
const PROVIDER_NAMES: Record<string, string> = {
  azure: 'azure.ai.openai',
  xai: 'x_ai',
  qwen: 'alibaba.dashscope',
  dashscope: 'alibaba.dashscope',
  vertex: 'gcp.vertex_ai',
  'vertex-anthropic': 'gcp.vertex_ai',
};

/** Bucket boundaries the conventions advise for `gen_ai.client.token.usage`. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** Bucket boundaries (seconds) the conventions advise for `gen_ai.client.operation.duration` and the chunk and tool times. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** Bucket boundaries (seconds) the conventions advise for `gen_ai.invoke_agent.duration`. */
const AGENT_BUCKETS = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6];

interface Instruments {
  tokens: Histogram;
  duration: Histogram;
  firstChunk: Histogram;
  chunkGap: Histogram;
  tool: Histogram;
  agent: Histogram;
}

/** When each tool or loop span started and its metric's attributes, for its duration (the span API has neither). */
const starts = new WeakMap<Span, { started: number; attributes: Attributes }>();

const instrumentsByMeter = new WeakMap<Meter, Instruments>();

function instrumentsOf(meter: Meter): Instruments {
  let instruments = instrumentsByMeter.get(meter);
  if (!instruments) {
    const seconds = (name: string, description: string, buckets = DURATION_BUCKETS) =>
      meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: buckets } });
    instruments = {
      tokens: meter.createHistogram('gen_ai.client.token.usage', {
        unit: '{token}',
        description: 'Number of input and output tokens used',
        advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
      }),
      duration: seconds('gen_ai.client.operation.duration', 'GenAI operation duration'),
      firstChunk: seconds(
        'gen_ai.client.operation.time_to_first_chunk',
        'Time to receive the first chunk of a streamed response',
      ),
      chunkGap: seconds(
        'gen_ai.client.operation.time_per_output_chunk',
        'Time per output chunk, recorded for each chunk received after the first one',
      ),
      tool: seconds('gen_ai.execute_tool.duration', 'The duration of a single tool execution'),
      agent: seconds(
        'gen_ai.invoke_agent.duration',
        'The end-to-end duration of a single agent invocation',
        AGENT_BUCKETS,
      ),
    };
    instrumentsByMeter.set(meter, instruments);
  }
  return instruments;
}

/** Telemetry switched on for one operation: the API, the tracer and meter, and where its spans hang. */
export class Telemetry {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;
  readonly #meter: Meter;
  readonly recordContent: boolean;
  /** The context this operation's spans start under. */
  readonly parent: Context;
  /** `gen_ai.provider.name`, `server.address`, `server.port`. */
  readonly #base: Attributes;
  /** The call's API key(s): redacted from every attribute, event and exception. */
  readonly #secrets: readonly string[];

  constructor(
    api: OtelApi,
    tracer: Tracer,
    meter: Meter,
    recordContent: boolean,
    parent: Context,
    base: Attributes,
    secrets: readonly string[] = [],
  ) {
    this.#api = api;
    this.#tracer = tracer;
    this.#meter = meter;
    this.recordContent = recordContent;
    this.parent = parent;
    this.#base = base;
    this.#secrets = secrets;
  }

  /**
   * Telemetry for a client's provider (its preset's name) and server, with the merged options; `secrets` (the
   * call's API key) never reach a span.
   */
  static of(
    api: OtelApi,
    options: TelemetryOptions,
    provider: string,
    server: URL | undefined,
    secrets: readonly string[] = [],
  ): Telemetry {
    const base: Attributes = { 'gen_ai.provider.name': PROVIDER_NAMES[provider] ?? provider };
    if (server) {
      base['server.address'] = server.hostname;
      base['server.port'] = Number(server.port) || (server.protocol === 'https:' ? 443 : 80);
    }
    return new Telemetry(
      api,
      options.tracer ?? api.trace.getTracer('ai4ts'),
      options.meter ?? api.metrics.getMeter('ai4ts'),
      options.recordContent === true,
      options.parent ?? api.context.active(),
      base,
      secrets,
    );
  }

  /** These settings as options, for a call made under them. */
  get options(): TelemetryOptions {
    return { tracer: this.#tracer, meter: this.#meter, recordContent: this.recordContent, parent: this.parent };
  }

  /** The same settings with spans under `span` (a loop's steps and tools under the loop's span). */
  under(span: Span): Telemetry {
    const parent = this.#api.trace.setSpan(this.parent, span);
    return new Telemetry(this.#api, this.#tracer, this.#meter, this.recordContent, parent, this.#base, this.#secrets);
  }

  /** Starts the span of one model request: `chat {model}`, kind CLIENT, the request's gen_ai attributes. */
  startModel(protocol: string, body: unknown): ModelSpan {
    const request = isRecord(body) ? body : {};
    const model = typeof request.model === 'string' ? request.model : undefined;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      ...this.#base,
      'ai4ts.protocol': protocol,
      ...requestAttributes(request, this.#secrets),
    };
    if (this.recordContent) Object.assign(attributes, inputContent(request, this.#secrets));
    const span = this.#tracer.startSpan(
      model === undefined ? 'chat' : `chat ${model}`,
      { kind: this.#api.SpanKind.CLIENT, attributes },
      this.parent,
    );
    const metricAttributes: Attributes = { 'gen_ai.operation.name': 'chat', ...this.#base };
    if (model !== undefined) metricAttributes['gen_ai.request.model'] = model;
    return new ModelSpan(this.#api, span, instrumentsOf(this.#meter), metricAttributes, this.recordContent, this.#secrets);
  }

  /** Starts the span of one tool run: `execute_tool {name}`, kind INTERNAL. */
  startTool(call: { id: string; name: string; arguments: string }): Span {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.type': 'function',
    };
    if (this.recordContent) attributes['gen_ai.tool.call.arguments'] = redact(call.arguments, this.#secrets);
    const span = this.#tracer.startSpan(
      `execute_tool ${call.name}`,
      { kind: this.#api.SpanKind.INTERNAL, attributes },
      this.parent,
    );
    starts.set(span, { started: performance.now(), attributes: { 'gen_ai.tool.name': call.name } });
    return span;
  }

  /** Ends a tool's span with its outcome, and records `gen_ai.execute_tool.duration` (a refused call never ran). */
  endTool(span: Span, outcome: ToolOutcome): void {
    span.setAttribute('ai4ts.tool.outcome', outcome.kind);
    if (this.recordContent) span.setAttribute('gen_ai.tool.call.result', redact(outcome.content, this.#secrets));
    if (outcome.error) fail(this.#api, span, outcome.error, this.recordContent, this.#secrets);
    span.end();
    if (outcome.kind !== 'rejected') this.#record(span, instrumentsOf(this.#meter).tool, outcome.error);
  }

  /** Records the duration of a tool's or a loop's span, `error.type` when it failed. */
  #record(span: Span, histogram: Histogram, error: unknown): void {
    const start = starts.get(span);
    if (!start) return;
    const attributes = error === undefined ? start.attributes : { ...start.attributes, 'error.type': errorType(error) };
    histogram.record((performance.now() - start.started) / 1000, attributes);
  }

  /** Starts the span of a whole tool loop: `invoke_agent`, kind INTERNAL, the parent of its steps and tools. */
  startLoop(body: unknown): Span {
    const request = isRecord(body) ? body : {};
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', ...this.#base };
    if (typeof request.model === 'string') attributes['gen_ai.request.model'] = request.model;
    const span = this.#tracer.startSpan('invoke_agent', { kind: this.#api.SpanKind.INTERNAL, attributes }, this.parent);
    const metric: Attributes = {};
    if (typeof request.model === 'string') metric['gen_ai.request.model'] = request.model;
    starts.set(span, { started: performance.now(), attributes: metric });
    return span;
  }

  /** Ends a loop's span (total usage and cost, steps, why it stopped; or the error) and records its duration. */
  endLoop(span: Span, outcome: LoopOutcome): void {
    setUsage(span, outcome.usage);
    span.setAttribute('ai4ts.loop.steps', outcome.steps);
    if (outcome.cost) span.setAttribute('ai4ts.cost', outcome.cost.total);
    if (outcome.finishReason) span.setAttribute('gen_ai.response.finish_reasons', [outcome.finishReason]);
    if (outcome.error) fail(this.#api, span, outcome.error, this.recordContent, this.#secrets);
    span.end();
    this.#record(span, instrumentsOf(this.#meter).agent, outcome.error ?? undefined);
  }
}

/** How a tool call ended, for its span. */
export interface ToolOutcome {
  /** `ok`; `error` (it threw, or the loop was aborted); `timeout`; `rejected` (never ran: bad arguments, unknown tool, denied). */
  kind: 'ok' | 'error' | 'timeout' | 'rejected';
  /** What the model receives. */
  content: string;
  error: Error | undefined;
}

/** How a loop ended, for its span. */
export interface LoopOutcome {
  steps: number;
  usage: Usage | undefined;
  cost: Cost | undefined;
  finishReason: string | undefined;
  error: unknown;
}

/** What a span records of a model's answer. */
export interface ResultSummary {
  /** The response's id (`chatcmpl-…`, `resp_…`, `msg_…`). */
  id: string | undefined;
  /** The model that answered. */
  model: string | undefined;
  finishReasons: string[];
  usage: Usage | undefined;
  /** The answer as the protocol shapes it, recorded only with `recordContent`. */
  output: unknown;
}

/** The span of one model request, with the metrics it feeds. */
export class ModelSpan {
  readonly #api: OtelApi;
  readonly span: Span;
  readonly #instruments: Instruments;
  readonly #metricAttributes: Attributes;
  readonly #recordContent: boolean;
  readonly #secrets: readonly string[];
  readonly #started = performance.now();
  #firstChunk: number | undefined;
  #lastChunk = 0;
  /** The seconds between two chunks after the first, recorded at the end with the answer's attributes. */
  readonly #gaps: number[] = [];

  constructor(
    api: OtelApi,
    span: Span,
    instruments: Instruments,
    metricAttributes: Attributes,
    content: boolean,
    secrets: readonly string[] = [],
  ) {
    this.#api = api;
    this.span = span;
    this.#instruments = instruments;
    this.#metricAttributes = metricAttributes;
    this.#recordContent = content;
    this.#secrets = secrets;
  }

  /**
   * A chunk (a normalized event) of a streamed answer arrived: the first one's time (after any retry: the attempt that
   * streamed) is on the span, the time since the previous one for each later one.
   */
  chunk(): void {
    const now = performance.now();
    if (this.#firstChunk === undefined) {
      this.#firstChunk = (now - this.#started) / 1000;
      this.span.setAttribute('gen_ai.response.time_to_first_chunk', this.#firstChunk);
    } else this.#gaps.push((now - this.#lastChunk) / 1000);
    this.#lastChunk = now;
  }

  /** A retry is about to happen: an event on the span. */
  retry(attempt: number, reason: string, delayMs: number, phase: 'headers' | 'stream'): void {
    this.span.addEvent('ai4ts.retry', {
      'ai4ts.retry.attempt': attempt,
      'ai4ts.retry.phase': phase,
      'ai4ts.retry.delay_ms': Math.round(delayMs),
      'error.type': reason,
    });
  }

  /** A cut stream is read on from a new connection: an event on the span. */
  resume(resumes: number): void {
    this.span.addEvent('ai4ts.resume', { 'ai4ts.resume.count': resumes });
  }

  /** The response's headers arrived. */
  response(status: number, requestId: string | undefined): void {
    this.span.setAttribute('http.response.status_code', status);
    if (requestId !== undefined) this.span.setAttribute('ai4ts.request_id', redact(requestId, this.#secrets));
  }

  /** Ends the span with the answer's attributes and records the metrics. */
  end(summary: ResultSummary, cost: Cost | undefined): void {
    const { span } = this;
    if (summary.id !== undefined) span.setAttribute('gen_ai.response.id', summary.id);
    if (summary.model !== undefined) span.setAttribute('gen_ai.response.model', summary.model);
    if (summary.finishReasons.length > 0) span.setAttribute('gen_ai.response.finish_reasons', summary.finishReasons);
    setUsage(span, summary.usage);
    if (cost) span.setAttribute('ai4ts.cost', cost.total);
    if (this.#recordContent && summary.output !== undefined) {
      span.setAttribute('gen_ai.output.messages', redact(JSON.stringify(summary.output), this.#secrets));
    }
    span.end();
    const attributes = { ...this.#metricAttributes };
    if (summary.model !== undefined) attributes['gen_ai.response.model'] = summary.model;
    this.#record(attributes);
    if (summary.usage) {
      const { tokens } = this.#instruments;
      tokens.record(summary.usage.prompt_tokens, { ...attributes, 'gen_ai.token.type': 'input' });
      tokens.record(summary.usage.completion_tokens, { ...attributes, 'gen_ai.token.type': 'output' });
    }
  }

  /** Ends the span with the error (its type, status ERROR, the exception) and records the duration. */
  fail(error: unknown): void {
    fail(this.#api, this.span, error, this.#recordContent, this.#secrets);
    this.span.end();
    this.#record({ ...this.#metricAttributes, 'error.type': errorType(error) });
  }

  #record(attributes: Attributes): void {
    this.#instruments.duration.record((performance.now() - this.#started) / 1000, attributes);
    if (this.#firstChunk !== undefined) this.#instruments.firstChunk.record(this.#firstChunk, attributes);
    for (const gap of this.#gaps) this.#instruments.chunkGap.record(gap, attributes);
  }
}

/** `error.type`: the error's class (`RateLimitError`, `TimeoutError`, ...), or `_OTHER`. */
function errorType(error: unknown): string {
  return error instanceof Error ? error.name : '_OTHER';
}

/** Marks a span failed; the error's message only with `content` (see failure.ts), the secrets never. */
function fail(api: OtelApi, span: Span, error: unknown, content: boolean, secrets: readonly string[]): void {
  span.setAttribute('error.type', errorType(error));
  if (error instanceof ApiError && error.code !== undefined) span.setAttribute('ai4ts.error.code', redact(error.code, secrets));
  if (error instanceof Error) span.recordException(failureException(error, content, secrets));
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: failureMessage(error, content, secrets) });
}

function setUsage(span: Span, usage: Usage | undefined): void {
  if (!usage) return;
  span.setAttribute('gen_ai.usage.input_tokens', usage.prompt_tokens);
  span.setAttribute('gen_ai.usage.output_tokens', usage.completion_tokens);
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (cached !== undefined) span.setAttribute('gen_ai.usage.cache_read.input_tokens', cached);
}

/**
 * The request parameters the conventions name, read from any protocol's wire body (Gemini's sit in
 * `generationConfig`, in camelCase).
 */
function requestAttributes(request: Record<string, unknown>, secrets: readonly string[]): Attributes {
  const attributes: Attributes = {};
  const config = isRecord(request.generationConfig) ? request.generationConfig : {};
  const number = (name: string, value: unknown) => {
    if (typeof value === 'number') attributes[name] = value;
  };
  if (typeof request.model === 'string') attributes['gen_ai.request.model'] = request.model;
  number(
    'gen_ai.request.max_tokens',
    request.max_tokens ?? request.max_completion_tokens ?? request.max_output_tokens ?? config.maxOutputTokens,
  );
  number('gen_ai.request.temperature', request.temperature ?? config.temperature);
  number('gen_ai.request.top_p', request.top_p ?? config.topP);
  number('gen_ai.request.top_k', request.top_k ?? config.topK);
  number('gen_ai.request.frequency_penalty', request.frequency_penalty ?? config.frequencyPenalty);
  number('gen_ai.request.presence_penalty', request.presence_penalty ?? config.presencePenalty);
  number('gen_ai.request.seed', request.seed ?? config.seed);
  const choices = request.n ?? config.candidateCount;
  if (typeof choices === 'number' && choices !== 1) attributes['gen_ai.request.choice.count'] = choices;
  const stop = request.stop ?? request.stop_sequences ?? config.stopSequences;
  if (typeof stop === 'string') attributes['gen_ai.request.stop_sequences'] = [redact(stop, secrets)];
  else if (Array.isArray(stop) && stop.every((item) => typeof item === 'string')) {
    attributes['gen_ai.request.stop_sequences'] = stop.map((item) => redact(item, secrets));
  }
  return attributes;
}

/**
 * The input of any protocol's body: its messages (Responses' `input`, Gemini's `contents`) and its system
 * instructions (Gemini's `systemInstruction`).
 */
function inputContent(request: Record<string, unknown>, secrets: readonly string[]): Attributes {
  const attributes: Attributes = {};
  const input = request.messages ?? request.input ?? request.contents;
  if (input !== undefined) attributes['gen_ai.input.messages'] = redactJsonText(JSON.stringify(input), secrets);
  const system = request.system ?? request.instructions ?? request.systemInstruction;
  if (system !== undefined) attributes['gen_ai.system_instructions'] = redactJsonText(JSON.stringify(system), secrets);
  return attributes;
}
