/**
 * The gateway's one request shape. Each inbound protocol (Chat Completions, Responses, Messages, Gemini) is parsed into a
 * {@link GatewayRequest}, and each upstream protocol's body is built from it, so that N protocols need N parsers and N
 * builders rather than N x N translations. Answers take the other road: every upstream is read into the normalized
 * {@link BridgeEvent}s, and every inbound protocol has a writer of those events (docs/gateway.md has the table).
 */
import type { ProtocolName, ProviderQuirks, StreamFraming } from '@ai4ts/core';
import { isRecord, type ResultSummary } from '@ai4ts/core/internal';
import type { SseMessage } from '@ai4ts/sse';
import type { BridgeEvent, OpenAIErrorObject, ReasoningSignatureEvent } from '@ai4ts/bridge';
import { badRequest } from './bad-request.js';

/** The wire protocols the gateway speaks, in and out: every `ProtocolName`. */
export type GatewayProtocol = ProtocolName;

/**
 * A prompt-cache breakpoint (Messages' `cache_control`): the prompt up to the block it marks is cached. Only Messages
 * takes markers; OpenAI caches prefixes by itself, Gemini by `cachedContent`.
 */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** A user content part. An image's `url` is an http(s) URL or a `data:` URL. */
export type Part = { type: 'text'; text: string; cache?: CacheControl } | { type: 'image'; url: string; cache?: CacheControl };

/** A tool call of the model; its id is kept as is across protocols. */
export interface ToolCallSpec {
  id: string;
  name: string;
  /** The argument string, JSON. */
  arguments: string;
}

/** The protocols whose vendors seal their reasoning. */
export type SealingProtocol = 'messages' | 'responses' | 'gemini';

/**
 * Reasoning's proof, valid only at the vendor that made it: Messages' thinking `signature` (or, `redacted`, the data of
 * a `redacted_thinking` block), Responses' `encrypted_content`, Gemini's `thoughtSignature`. It goes back only to an
 * upstream of its `origin`: another vendor would refuse it, and the reasoning then goes as nothing (see each body).
 */
export interface Seal {
  origin: SealingProtocol;
  value: string;
  /** Messages' `redacted_thinking`: the reasoning is encrypted whole, there is no text. */
  redacted?: true;
}

/** Reasoning the model produced before, sent back with its seal when it has one. */
export interface ReasoningPart {
  text: string;
  seal?: Seal;
}

/**
 * A seal that is not the inbound protocol's own travels through that protocol's clients in an envelope: this prefix
 * and the seal's JSON in base64url. No vendor's signature has a dot in it (they are base64 or base64url), so an
 * envelope is never taken for one.
 */
const ENVELOPE = 'ai4ts.seal.';

function base64url(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64url(text: string): string {
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/**
 * The seal as a client of `protocol` keeps it in its own field: as is when the client's protocol made it (Messages'
 * signature to a Messages client, ...), else in an envelope. A Messages `redacted_thinking` written into Messages is
 * its own block (see messages.ts), not this.
 */
export function sealText(seal: Seal, protocol: GatewayProtocol): string {
  if (seal.origin === protocol && !seal.redacted) return seal.value;
  return ENVELOPE + base64url(JSON.stringify(seal));
}

/**
 * The seal a client of `protocol` sent back in its field: an envelope opened, else the protocol's own vendor's (none
 * for Chat, whose vendors have no seal). A damaged envelope is no seal: the reasoning goes back as unsigned.
 */
export function readSeal(text: string, protocol: GatewayProtocol): Seal | undefined {
  if (!text.startsWith(ENVELOPE)) return protocol === 'chat' || text === '' ? undefined : { origin: protocol, value: text };
  try {
    const value: unknown = JSON.parse(fromBase64url(text.slice(ENVELOPE.length)));
    if (!isRecord(value)) return undefined;
    const { origin, value: sealed, redacted } = value;
    if ((origin !== 'messages' && origin !== 'responses' && origin !== 'gemini') || typeof sealed !== 'string') return undefined;
    return { origin, value: sealed, ...(redacted === true && { redacted }) };
  } catch {
    return undefined;
  }
}

/** The seal a `reasoning.signature` event carries. */
export function sealOf(event: ReasoningSignatureEvent): Seal {
  return { origin: event.origin ?? 'messages', value: event.signature, ...(event.redacted === true && { redacted: true }) };
}

/** The seal to send to an upstream of `protocol`: the part's, when that protocol made it. */
export function sealFor(part: ReasoningPart, protocol: GatewayProtocol): Seal | undefined {
  return part.seal?.origin === protocol ? part.seal : undefined;
}

/** One turn of the conversation. */
export type Turn =
  | { role: 'user'; parts: Part[] }
  | {
      role: 'assistant';
      text: string;
      reasoning: ReasoningPart[];
      toolCalls: ToolCallSpec[];
      /** The `thoughtSignature` of a Gemini answer's text: sent back on its text part to a Gemini upstream. */
      textSignature?: string;
    }
  | { role: 'tool'; callId: string; output: string; isError: boolean; cache?: CacheControl };

/** A client tool: a function with a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  cache?: CacheControl;
}

/** Which tool the model must (or must not) call. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/**
 * A structured answer the request asks for: Chat's `response_format`, Responses' `text.format`, Messages'
 * `output_config.format` (which has no JSON mode without a schema).
 */
export type ResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

/**
 * The request's options that some protocols have and others lack. Each codec names its field for each one (its
 * {@link ProtocolCodec.fields}), so that what a target cannot carry is named in the inbound protocol's words.
 */
export interface CarriedOptions {
  stop: string[] | undefined;
  seed: number | undefined;
  /** Messages' `top_k`. */
  topK: number | undefined;
  /** Chat and Responses' `parallel_tool_calls`; Messages' `tool_choice.disable_parallel_tool_use`, inverted. */
  parallelToolCalls: boolean | undefined;
  /** The end user: `user` (Chat, Responses), `metadata.user_id` (Messages). */
  user: string | undefined;
  /** Carried only to an upstream of the inbound protocol: the protocols name different tiers. */
  serviceTier: string | undefined;
  responseFormat: ResponseFormat | undefined;
  /** `true` when the request marks cache breakpoints (on its parts, tools, system or tool results). */
  cacheControl: true | undefined;
}

/** The name of one of the {@link CarriedOptions}. */
export type CarriedOption = keyof CarriedOptions;

/**
 * How a protocol names one option: its field (dotted, as the `param` of an error), an object when it carries only
 * some values of it, or undefined when it has no such field.
 */
export type OptionField = string | { name: string; carries(request: GatewayRequest): boolean } | undefined;

/** A request in any protocol, read into one shape. */
export interface GatewayRequest extends CarriedOptions {
  /** The protocol the client spoke. */
  protocol: GatewayProtocol;
  model: string;
  stream: boolean;
  /** System and developer prompts, joined with a blank line. */
  system: string | undefined;
  /** A cache breakpoint at the end of the system prompt. */
  systemCache?: CacheControl;
  turns: Turn[];
  tools: ToolSpec[];
  toolChoice: ToolChoice | undefined;
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  /** Chat's `reasoning_effort`, Responses' `reasoning.effort`, Messages' thinking budget read as an effort. */
  reasoningEffort: 'minimal' | 'low' | 'medium' | 'high' | undefined;
  /** Chat's `stream_options.include_usage`; the other two protocols always report usage. */
  includeUsage: boolean;
  /** The session id for daemons: `metadata.session_id`, else `user` (Messages: `metadata.user_id`). */
  sessionId: string | undefined;
  /** The validated body as the client sent it (custom dialects may read more of it). */
  raw: Record<string, unknown>;
  /** What the request held that has no place in the gateway's shape: named in the `x-ai4ts-dropped` header. */
  dropped: string[];
}

/** What a path that names the model says: the model, and whether the answer streams (and how). */
export interface PathRoute {
  model: string;
  stream: boolean;
}

/** Options of a writer of one protocol's answer. */
export interface WriteOptions {
  /** The model the answer reports: the one the client asked for. */
  model: string;
  /** `'daemon'`: tool calls were run by a daemon (reported in the vendor field); `'client'`: they are the client's. */
  toolCalls: 'daemon' | 'client';
  /** Chat only: send the usage chunk. */
  includeUsage: boolean;
  /** The session id to report when the daemon names none. */
  sessionId: string | undefined;
}

/** An error object in the shape the proxy has always used: OpenAI's. Each protocol renders it its own way. */
export type GatewayErrorObject = OpenAIErrorObject;

/**
 * A protocol codec: everything the gateway knows of one protocol, how to read its requests, write its answers and
 * errors, and build and read its upstream calls.
 */
export interface ProtocolCodec {
  name: GatewayProtocol;
  /**
   * The protocol's path under an API root, from its definition (`/chat/completions`, ...): clients call it under the
   * gateway's `/v1`, and upstreams under their base URL. A path with `{model}` in it is served by {@link match}.
   */
  path: string;
  /**
   * For a protocol whose path names the model (Gemini's `/v1beta/models/{model}:generateContent`): what an inbound
   * path says, or undefined when it is not this protocol's. Codecs without it are served at `/v1` + `path`.
   */
  match?(path: string, query: URLSearchParams): PathRoute | undefined;
  /** The upstream endpoint of one request when it depends on the model (Gemini); `path` otherwise. */
  endpoint?(model: string): { path: string; query?: Record<string, string> };
  /** Reads a request body (and what its path said); throws an HttpError (400) naming the first bad field. */
  parse(json: unknown, route?: PathRoute): GatewayRequest;
  /** This protocol's field for each option some protocols lack; the body it builds carries those it names. */
  fields: Readonly<Record<CarriedOption, OptionField>>;
  /** An HTTP error body in this protocol's shape. */
  errorBody(status: number, error: GatewayErrorObject): unknown;
  /**
   * A failure after output began, as this protocol writes it in-stream (the gateway's own, such as a stream store
   * that fails under a resumable stream; the writers below write the upstream's).
   */
  streamError(error: GatewayErrorObject): SseMessage;
  /** The streaming answer: SSE messages. Throws a failure before any output; writes it in-stream after. */
  stream(events: AsyncIterable<BridgeEvent>, options: WriteOptions): AsyncGenerator<SseMessage>;
  /**
   * `false` when the protocol's clients read an SSE event only when it starts with `data:` (Google's): its streams
   * carry no `id:` lines, and so cannot be resumed.
   */
  eventIds?: false;
  /** The aggregated answer. Throws the stream's failure. */
  aggregate(events: AsyncIterable<BridgeEvent>, options: WriteOptions): Promise<unknown>;
  /** The upstream body for a request (always streamed). */
  body(request: GatewayRequest, model: string): Record<string, unknown>;
  /** Headers an upstream of this protocol needs besides the JSON and auth ones (Messages' `anthropic-version`). */
  upstreamHeaders: Readonly<Record<string, string>>;
  /** Reads the upstream's answer into bridge events; a non-2xx Response becomes its typed ApiError. */
  read(response: Response, options: CodecReadOptions): AsyncIterable<BridgeEvent>;
}

/** Options of reading an upstream's answer. */
export interface UpstreamReadOptions {
  signal: AbortSignal;
  /** Scrubbed from whatever the upstream echoes. */
  secrets: readonly string[];
  /** Receives the protocol's reading of the result once the answer completed, for the upstream call's span. */
  summary?: ((summary: ResultSummary) => void) | undefined;
}

/** Options of a codec's reading of an upstream's answer: the target's, and its preset's quirks. */
export interface CodecReadOptions extends UpstreamReadOptions {
  /** The upstream preset's stream quirks, which its protocol's listener respects. */
  quirks: ProviderQuirks;
  /** The upstream preset's stream framing when it streams other than SSE (Bedrock's AWS event-stream frames). */
  framing?: StreamFraming | undefined;
}

/** The effort a thinking budget stands for, and back: the gateway's rule, documented in docs/gateway.md. */
export const EFFORT_BUDGETS = { minimal: 1024, low: 2048, medium: 8192, high: 24576 } as const;

/** The text of a user turn's parts. */
export function partsText(parts: readonly Part[]): string {
  return parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

/** A number field, or undefined. */
export function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A non-empty string field, or undefined. */
export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The last assistant turn when the conversation ends with one, else a new one appended. */
export function assistantTurn(turns: Turn[]): Extract<Turn, { role: 'assistant' }> {
  const last = turns.at(-1);
  if (last?.role === 'assistant') return last;
  const turn: Extract<Turn, { role: 'assistant' }> = { role: 'assistant', text: '', reasoning: [], toolCalls: [] };
  turns.push(turn);
  return turn;
}

/** Names the fields of `raw` that are not in `known`, as `dropped` entries. */
export function unknownFields(raw: Record<string, unknown>, known: ReadonlySet<string>): string[] {
  return Object.keys(raw).filter((key) => !known.has(key) && raw[key] !== undefined && raw[key] !== null);
}

/** The options to carry, in the order the translation table of docs/gateway.md lists them. */
const CARRIED: readonly CarriedOption[] = [
  'stop',
  'seed',
  'topK',
  'parallelToolCalls',
  'user',
  'serviceTier',
  'responseFormat',
  'cacheControl',
];

function fieldName(field: OptionField): string | undefined {
  return typeof field === 'object' ? field.name : field;
}

/** The options of `request` (read by `inbound`) that `target` cannot carry, named as the client named them. */
export function uncarried(request: GatewayRequest, inbound: ProtocolCodec, target: ProtocolCodec): string[] {
  return CARRIED.filter((option) => request[option] !== undefined && !carries(target, request, option)).map(
    (option) => fieldName(inbound.fields[option]) ?? option,
  );
}

/**
 * Whether a body built by `codec` for `request` carries `option`; its builder asks before writing one. A service tier
 * goes only to an upstream of the client's protocol: the protocols' tiers are different things.
 */
export function carries(codec: Pick<ProtocolCodec, 'name' | 'fields'>, request: GatewayRequest, option: CarriedOption): boolean {
  const field = codec.fields[option];
  if (request[option] === undefined || field === undefined) return false;
  if (option === 'serviceTier' && request.protocol !== codec.name) return false;
  return typeof field !== 'object' || field.carries(request);
}

/** Names the keys of an object field that the gateway does not carry (`metadata.tag`), as `dropped` entries. */
export function uncarriedKeys(
  field: string,
  value: Record<string, unknown> | null | undefined,
  carried: readonly string[],
): string[] {
  if (!value) return [];
  return Object.keys(value)
    .filter((key) => !carried.includes(key) && value[key] !== undefined && value[key] !== null)
    .map((key) => `${field}.${key}`);
}

/** A `cache_control` field as a marker, undefined when absent; a 400 naming it when it is not one. */
export function cacheOf(value: unknown): CacheControl | undefined {
  if (value === undefined || value === null) return undefined;
  const ttl = isRecord(value) ? value.ttl : undefined;
  if (!isRecord(value) || value.type !== 'ephemeral' || (ttl !== undefined && ttl !== '5m' && ttl !== '1h'))
    throw badRequest('cache_control: expected {"type": "ephemeral"} with an optional ttl of "5m" or "1h"', 'cache_control');
  return { type: 'ephemeral', ...((ttl === '5m' || ttl === '1h') && { ttl }) };
}

/** Whether any part, tool, tool result or the system prompt of a request marks a cache breakpoint. */
export function marksCache(request: Pick<GatewayRequest, 'turns' | 'tools' | 'systemCache'>): true | undefined {
  const marked =
    request.systemCache !== undefined ||
    request.tools.some((tool) => tool.cache) ||
    request.turns.some((turn) => (turn.role === 'user' ? turn.parts.some((part) => part.cache) : turn.role === 'tool' && turn.cache));
  return marked || undefined;
}

/** A provider-style id: `prefix` and a UUID without its dashes (`msg_…`, `resp_…`, `fc_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;
}
