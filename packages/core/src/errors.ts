/**
 * One error hierarchy for every ai4ts package.
 *
 * Errors raised after a stream began carry `partial`: everything received so far, in the same shape the
 * successful result would have had (a chat completion, a response, a message). Nothing already received is lost.
 * No error ever holds request headers, so an API key cannot leak through a message, a log or `toString()`.
 */

/** Longest provider message kept on an error; provider bodies can be whole HTML pages. */
export const MAX_ERROR_MESSAGE_LENGTH = 1000;

export interface Ai4tsErrorOptions<P = unknown> {
  cause?: unknown;
  /** Everything received before the failure, in the shape of the final result. */
  partial?: P;
}

/** The root of every error ai4ts throws. */
export class Ai4tsError<P = unknown> extends Error {
  override name = 'Ai4tsError';
  /** Everything received before the failure (a partial completion, response or message), when streaming had begun. */
  partial: P | undefined;

  constructor(message: string, options: Ai4tsErrorOptions<P> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.partial = options.partial;
  }
}

/** The fields a provider's error body is read into. */
export interface ProviderErrorInfo {
  message: string;
  code?: string | undefined;
  type?: string | undefined;
  param?: string | undefined;
}

export interface ApiErrorOptions<P = unknown> extends Ai4tsErrorOptions<P> {
  /** HTTP status; undefined for an error reported inside a stream that began with 200. */
  status?: number | undefined;
  code?: string | undefined;
  type?: string | undefined;
  param?: string | undefined;
  requestId?: string | undefined;
  /** The provider's error body as parsed (JSON), or its text cut to a sane length. */
  body?: unknown;
  /** Response headers (never request headers). */
  headers?: Headers | undefined;
}

/** The API answered with an error: an HTTP status >= 400, or an error object inside a stream. */
export class ApiError<P = unknown> extends Ai4tsError<P> {
  override name = 'ApiError';
  readonly status: number | undefined;
  /** The provider's code: `error.code`, else `error.type`. */
  readonly code: string | undefined;
  readonly type: string | undefined;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  readonly body: unknown;
  readonly headers: Headers | undefined;

  constructor(message: string, options: ApiErrorOptions<P> = {}) {
    super(message, options);
    this.status = options.status;
    this.code = options.code;
    this.type = options.type;
    this.param = options.param;
    this.requestId = options.requestId;
    this.body = options.body;
    this.headers = options.headers;
  }

  /**
   * Builds the right subclass for an HTTP status from a provider's error body (any usual shape).
   * `body` is the parsed JSON, or the raw text when it was not JSON.
   */
  static fromResponse(
    status: number,
    body: unknown,
    headers?: Headers,
    options: Ai4tsErrorOptions = {},
  ): ApiError {
    const info = readProviderError(body) ?? { message: statusText(status) };
    const requestId = headers && requestIdOf(headers);
    const init: ApiErrorOptions = {
      ...options,
      status,
      code: info.code ?? info.type,
      type: info.type,
      param: info.param,
      requestId,
      body: typeof body === 'string' ? truncate(body) : body,
      headers,
    };
    const message = `${status} ${info.message}`;
    if (status === 401 || status === 403) return new AuthenticationError(message, init);
    if (status === 429) return new RateLimitError(message, init);
    if (status >= 500) return new ServerError(message, init);
    if (status >= 400) return new BadRequestError(message, init);
    return new ApiError(message, init);
  }

  /** Builds an error from an error object found inside a stream that began with HTTP 200. */
  static fromStreamError<P>(payload: unknown, partial: P): ApiError<P> {
    const info = readProviderError(payload) ?? { message: 'The stream reported an error' };
    return new ApiError<P>(info.message, {
      code: info.code ?? info.type,
      type: info.type,
      param: info.param,
      body: payload,
      partial,
    });
  }
}

/** The provider's request id: OpenAI's `x-request-id`, Anthropic's `request-id`, Azure's `x-ms-request-id`. */
export function requestIdOf(headers: Headers): string | undefined {
  return headers.get('x-request-id') ?? headers.get('request-id') ?? headers.get('x-ms-request-id') ?? undefined;
}

/** 401 or 403: the key is missing, wrong, or lacks permission. */
export class AuthenticationError<P = unknown> extends ApiError<P> {
  override name = 'AuthenticationError';
}

/** 429: too many requests or quota exhausted. `retryAfterMs` is the server's hint when it gave one. */
export class RateLimitError<P = unknown> extends ApiError<P> {
  override name = 'RateLimitError';
  get retryAfterMs(): number | undefined {
    return this.headers ? retryAfterMs(this.headers) : undefined;
  }
}

/** 5xx: the provider failed. */
export class ServerError<P = unknown> extends ApiError<P> {
  override name = 'ServerError';
}

/** Any other 4xx: the request was rejected. */
export class BadRequestError<P = unknown> extends ApiError<P> {
  override name = 'BadRequestError';
}

/** The connection failed or broke (DNS, refused, reset, a body that errored mid-read). */
export class ConnectionError<P = unknown> extends Ai4tsError<P> {
  override name = 'ConnectionError';
}

/** Which wait ran out. */
export type TimeoutPhase = 'headers' | 'first_token' | 'idle' | 'tool';

/** A wait ran out: for response headers, for the first event, between events, or for a tool. */
export class TimeoutError<P = unknown> extends Ai4tsError<P> {
  override name = 'TimeoutError';
  readonly phase: TimeoutPhase;
  readonly timeoutMs: number;

  constructor(phase: TimeoutPhase, timeoutMs: number, options: Ai4tsErrorOptions<P> = {}) {
    super(`Timed out after ${timeoutMs} ms waiting for ${PHASE_TEXT[phase]}`, options);
    this.phase = phase;
    this.timeoutMs = timeoutMs;
  }
}

const PHASE_TEXT: Record<TimeoutPhase, string> = {
  headers: 'response headers',
  first_token: 'the first event',
  idle: 'the next event',
  tool: 'the tool to finish',
};

/** The caller aborted (AbortSignal or `.abort()`). */
export class AbortError<P = unknown> extends Ai4tsError<P> {
  override name = 'AbortError';
}

/** The stream ended before its protocol's terminal event: never a success. `partial` holds what arrived. */
export class StreamIncompleteError<P = unknown> extends Ai4tsError<P> {
  override name = 'StreamIncompleteError';
}

/** The stream carried data that breaks its protocol (unparseable JSON, an impossible event order). */
export class ProtocolError<P = unknown> extends Ai4tsError<P> {
  override name = 'ProtocolError';
  /** The offending data, cut to a sane length. */
  readonly line: string | undefined;

  constructor(message: string, options: Ai4tsErrorOptions<P> & { line?: string } = {}) {
    super(message, options);
    this.line = options.line === undefined ? undefined : truncate(options.line);
  }
}

/**
 * A request field no protocol field, loop field or SDK field is named (a typo, `temprature`, `maxStep`), refused
 * with the client's `strictRequests`. Vendor fields go in `extraBody`.
 */
export class UnknownFieldError<P = unknown> extends Ai4tsError<P> {
  override name = 'UnknownFieldError';
  /** The field as written. */
  readonly field: string;
  /** The nearest known field, when one is near. */
  readonly suggestion: string | undefined;

  constructor(protocol: string, field: string, suggestion: string | undefined) {
    super(`Unknown ${protocol} request field "${field}"${suggestion ? `: did you mean "${suggestion}"?` : ''}`);
    this.field = field;
    this.suggestion = suggestion;
  }
}

/** A tool could not run or failed: unknown name, invalid arguments, a throw, a timeout. */
export class ToolError<P = unknown> extends Ai4tsError<P> {
  override name = 'ToolError';
  readonly toolName: string;
  readonly toolCallId: string | undefined;

  constructor(
    message: string,
    options: Ai4tsErrorOptions<P> & { toolName: string; toolCallId?: string | undefined },
  ) {
    super(message, options);
    this.toolName = options.toolName;
    this.toolCallId = options.toolCallId;
  }
}

/** Why {@link LoopStateError} refused a state or its decisions. */
export type LoopStateProblem =
  /** Not a loop state of this SDK (a field missing or of the wrong type). */
  | 'invalid'
  /** A state format version this SDK does not read. */
  | 'version'
  /** The state of another protocol's loop (a Chat state resumed on Messages). */
  | 'protocol'
  /** A pending call's arguments no longer match their hash, or the state's calls contradict each other. */
  | 'tampered'
  /** The decisions do not match the pending calls: an id missing, an unknown id, or the wrong kind of answer. */
  | 'decisions';

/**
 * A suspended tool loop could not resume: its state is not one this SDK wrote for this protocol, was changed, or the
 * decisions given do not answer exactly its pending calls. Nothing ran.
 */
export class LoopStateError<P = unknown> extends Ai4tsError<P> {
  override name = 'LoopStateError';
  readonly problem: LoopStateProblem;

  constructor(problem: LoopStateProblem, message: string, options: Ai4tsErrorOptions<P> = {}) {
    super(message, options);
    this.problem = problem;
  }
}

/** One reason a structured answer was rejected: zod's issue, or the JSON syntax error (`code: 'invalid_json'`). */
export interface OutputIssue {
  code: string;
  message: string;
  path: readonly PropertyKey[];
}

/**
 * A structured answer (`output`) that is not JSON or does not match its schema, or was cut off. `text` is the raw
 * answer, `issues` what is wrong; `partial` (from the tool loop) holds the steps so far.
 */
export class OutputValidationError<P = unknown> extends Ai4tsError<P> {
  override name = 'OutputValidationError';
  readonly text: string;
  readonly issues: readonly OutputIssue[];

  constructor(message: string, options: Ai4tsErrorOptions<P> & { text: string; issues: readonly OutputIssue[] }) {
    super(message, options);
    this.text = options.text;
    this.issues = options.issues;
  }
}

/**
 * The model refused to give the structured answer (OpenAI's `refusal`, Anthropic's `refusal` stop reason). Not a
 * validation error: `refusal` is the model's explanation, possibly empty.
 */
export class OutputRefusalError<P = unknown> extends Ai4tsError<P> {
  override name = 'OutputRefusalError';
  readonly refusal: string;

  constructor(refusal: string, options: Ai4tsErrorOptions<P> = {}) {
    super(refusal ? `The model refused: ${truncate(refusal)}` : 'The model refused to answer', options);
    this.refusal = refusal;
  }
}

/**
 * Reads a provider's error body in its usual shapes: `{error:{message,type,code,param}}`, `{error:"..."}`,
 * `{message}`, `{detail}` (FastAPI-style, string or list), `{msg}`, `{error_code, error_msg}` (Baidu), or plain text. Undefined when nothing fits.
 */
export function readProviderError(body: unknown): ProviderErrorInfo | undefined {
  if (typeof body === 'string') return body.trim() ? { message: truncate(body.trim()) } : undefined;
  if (!isRecord(body)) return undefined;
  const inner = body.error;
  if (isRecord(inner)) {
    const info = readProviderError(inner);
    return {
      message: info?.message ?? 'Unknown error',
      code: info?.code ?? text(inner.code),
      type: info?.type ?? text(inner.type),
      param: info?.param ?? text(inner.param),
    };
  }
  const message =
    text(inner) ?? text(body.message) ?? detailText(body.detail) ?? text(body.msg) ?? text(body.error_msg);
  if (message === undefined && body.code === undefined && body.type === undefined) return undefined;
  // Cut once, here: the message may be assembled from several parts (a FastAPI detail list).
  return {
    message: truncate(message ?? 'Unknown error'),
    code: cut(text(body.code) ?? text(body.error_code)),
    type: cut(text(body.type)),
    param: cut(text(body.param)),
  };
}

/** Milliseconds a response asks the client to wait: `retry-after-ms`, then `Retry-After` (seconds or HTTP date). */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Cuts provider text to {@link MAX_ERROR_MESSAGE_LENGTH}. */
export function truncate(value: string, max = MAX_ERROR_MESSAGE_LENGTH): string {
  return value.length <= max ? value : `${value.slice(0, max)}… (${value.length - max} more characters)`;
}

function detailText(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const parts = detail.map((d) => (isRecord(d) ? (text(d.msg) ?? JSON.stringify(d)) : String(d)));
    return parts.length ? parts.join('; ') : undefined;
  }
  return isRecord(detail) ? (text(detail.message) ?? JSON.stringify(detail)) : undefined;
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function cut(value: string | undefined): string | undefined {
  return value === undefined ? undefined : truncate(value);
}

function statusText(status: number): string {
  return STATUS_TEXT[status] ?? 'status code (no body)';
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
