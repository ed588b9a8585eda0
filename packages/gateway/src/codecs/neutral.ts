/**
 * The gateway's one request shape. Each inbound protocol (Chat Completions, Responses, Messages) is parsed into a
 * {@link GatewayRequest}, and each upstream protocol's body is built from it, so that N protocols need N parsers and N
 * builders rather than N x N translations. Answers take the other road: every upstream is read into the normalized
 * {@link BridgeEvent}s, and every inbound protocol has a writer of those events (docs/gateway.md has the table).
 */
import type { ProtocolName, ProviderQuirks } from '@ai4ts/core';
import type { ResultSummary } from '@ai4ts/core/internal';
import type { SseMessage } from '@ai4ts/sse';
import type { BridgeEvent, OpenAIErrorObject } from '@ai4ts/bridge';

/** The three wire protocols the gateway speaks, in and out. */
export type GatewayProtocol = ProtocolName;

/** A user content part. An image's `url` is an http(s) URL or a `data:` URL. */
export type Part = { type: 'text'; text: string } | { type: 'image'; url: string };

/** A tool call of the model; its id is kept as is across protocols. */
export interface ToolCallSpec {
  id: string;
  name: string;
  /** The argument string, JSON. */
  arguments: string;
}

/** Reasoning the model produced before, sent back; `signature` is Messages' thinking signature. */
export interface ReasoningPart {
  text: string;
  signature?: string;
}

/** One turn of the conversation. */
export type Turn =
  | { role: 'user'; parts: Part[] }
  | { role: 'assistant'; text: string; reasoning: ReasoningPart[]; toolCalls: ToolCallSpec[] }
  | { role: 'tool'; callId: string; output: string; isError: boolean };

/** A client tool: a function with a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** Which tool the model must (or must not) call. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** A request in any protocol, read into one shape. */
export interface GatewayRequest {
  /** The protocol the client spoke. */
  protocol: GatewayProtocol;
  model: string;
  stream: boolean;
  /** System and developer prompts, joined with a blank line. */
  system: string | undefined;
  turns: Turn[];
  tools: ToolSpec[];
  toolChoice: ToolChoice | undefined;
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  stop: string[] | undefined;
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
   * gateway's `/v1`, and upstreams under their base URL.
   */
  path: string;
  /** Reads a request body; throws an HttpError (400) naming the first bad field. */
  parse(json: unknown): GatewayRequest;
  /** An HTTP error body in this protocol's shape. */
  errorBody(status: number, error: GatewayErrorObject): unknown;
  /**
   * A failure after output began, as this protocol writes it in-stream (the gateway's own, such as a stream store
   * that fails under a resumable stream; the writers below write the upstream's).
   */
  streamError(error: GatewayErrorObject): SseMessage;
  /** The streaming answer: SSE messages. Throws a failure before any output; writes it in-stream after. */
  stream(events: AsyncIterable<BridgeEvent>, options: WriteOptions): AsyncGenerator<SseMessage>;
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

/** A provider-style id: `prefix` and a UUID without its dashes (`msg_…`, `resp_…`, `fc_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;
}
