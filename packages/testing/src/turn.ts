/**
 * The protocol-neutral turn a script returns, and the defaults every protocol renders it with. chat.ts,
 * responses.ts and messages.ts each turn a {@link ResolvedTurn} into their own wire shapes.
 */
import { asciiJson } from './fragment.js';

/** The wire protocols the scripted model speaks. */
export type MockProtocol = 'chat' | 'responses' | 'messages' | 'gemini';

/** A tool call the scripted model makes. */
export interface MockToolCall {
  /** Generated when absent: `call_…` for Chat Completions and Responses, `toolu_…` for Messages. */
  id?: string;
  name: string;
  /** Sent exactly as given when a string; an object is sent as JSON with non-ASCII characters `\uXXXX`-escaped. */
  arguments: string | Record<string, unknown>;
}

/**
 * Token usage, in the Chat Completions shape whatever the protocol: Responses gets `input_tokens`,
 * `output_tokens`, `total_tokens` and the details from it, Messages `input_tokens` and `output_tokens`.
 */
export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  [key: string]: unknown;
}

/** What the scripted model answers to one request, whichever protocol the request used. */
export interface MockTurn {
  /**
   * Streamed before the content: `reasoning_content` deltas (Chat, DeepSeek style), a reasoning item's summary
   * (Responses) or a thinking block with a signature (Messages).
   */
  reasoning?: string;
  /** Messages: the thinking block's `signature` (default: seeded, `Eq` and 94 characters), for tests that assert the exact turn sent back. */
  signature?: string;
  /** Messages: a `redacted_thinking` block with this data, before the thinking (other protocols: nothing). */
  redactedThinking?: string;
  content?: string;
  /**
   * A structured answer: sent as the content's JSON (Chat Completions, Responses, and Messages when the request has
   * `output_config.format`), or as the input of the tool a Messages request forces with `tool_choice`.
   */
  object?: unknown;
  /** The model refuses: Chat's `refusal`, a Responses `refusal` part, a Messages `refusal` stop reason with this text. */
  refusal?: string;
  /** Parallel tool calls: interleaved with arguments cut anywhere (Chat), one item or block after another otherwise. */
  toolCalls?: MockToolCall[];
  /**
   * In the Chat Completions vocabulary: `tool_calls` when there are tool calls, else `stop`. `length` is a
   * Responses `response.incomplete` (`max_output_tokens`) and a Messages `max_tokens`; see docs/testing.md.
   */
  finishReason?: string;
  /** Estimated from the text lengths when absent (about 4 characters a token). */
  usage?: MockUsage;
  /** Wait this long before each streamed event. */
  chunkDelayMs?: number;
  /** Gemini: the prompt is blocked with this `promptFeedback.blockReason` (`SAFETY`, ...): no candidate comes. */
  blockReason?: string;
  /** Gemini: the candidate's `finishMessage` (a refusal's text goes here). */
  finishMessage?: string;
  /** Answer with this HTTP status and body instead (body default: the protocol's own error object). */
  httpError?: { status: number; body?: unknown };
  /** Streaming: after the turn's deltas, send this error the protocol's way and end the stream. */
  streamError?: { message: string; type?: string; code?: string };
  /**
   * Streaming: stop after this many SSE events, before the terminal one; a negative count is taken from the end
   * (`-1`: all but the last event), so a cut lands at the same place whatever the fragmenting. `reset` destroys the
   * connection instead of ending it, once the events before the cut have gone out.
   */
  cutOff?: { afterChunks: number; reset?: boolean };
}

/** A tool call with its id and argument string decided. */
export interface ResolvedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A turn with everything decided: call ids, argument strings, finish reason, usage. */
export interface ResolvedTurn {
  reasoning: string;
  /** The scripted thinking signature, if any (Messages). */
  signature?: string;
  /** The scripted redacted thinking, if any (Messages). */
  redactedThinking?: string;
  content: string;
  /** The scripted structured answer, if any (its JSON is also `content`). */
  object?: unknown;
  refusal: string | undefined;
  toolCalls: ResolvedToolCall[];
  finishReason: string;
  usage: MockUsage;
}

/** What every protocol's renderer needs besides the turn and the request body. */
export interface RenderContext {
  /** The answer's id (`chatcmpl-mock-N`, `resp_mock_N`, `msg_mock_N`). */
  id: string;
  /** Unix seconds. */
  created: number;
  /** Seeded: cuts deltas and makes ids, so a run replays exactly. */
  random: () => number;
}

/** Fills in a turn's defaults. `promptText` feeds the usage estimate; `random` makes call ids with `idPrefix`. */
export function resolveTurn(turn: MockTurn, promptText: string, random: () => number, idPrefix = 'call_'): ResolvedTurn {
  const reasoning = turn.reasoning ?? '';
  const content = turn.content ?? (turn.object === undefined ? '' : JSON.stringify(turn.object));
  const toolCalls = (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? `${idPrefix}${randomId(random)}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : asciiJson(call.arguments),
  }));
  const finishReason = turn.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop');
  return {
    reasoning,
    ...(turn.signature !== undefined && { signature: turn.signature }),
    ...(turn.redactedThinking !== undefined && { redactedThinking: turn.redactedThinking }),
    content,
    ...(turn.object !== undefined && { object: turn.object }),
    refusal: turn.refusal,
    toolCalls,
    finishReason,
    usage: turn.usage ?? estimateUsage(promptText, reasoning, content + (turn.refusal ?? ''), toolCalls),
  };
}

/** The number in `usage[key][field]`, or 0: reads the optional details objects of {@link MockUsage}. */
export function usageDetail(usage: MockUsage, key: string, field: string): number {
  const details = usage[key];
  if (typeof details !== 'object' || details === null) return 0;
  const value: unknown = Reflect.get(details, field);
  return typeof value === 'number' ? value : 0;
}

function estimateUsage(promptText: string, reasoning: string, content: string, toolCalls: ResolvedToolCall[]): MockUsage {
  const tokens = (text: string) => Math.ceil(text.length / 4);
  const prompt = tokens(promptText);
  const reasoningTokens = tokens(reasoning);
  const completion = reasoningTokens + tokens(content) + tokens(toolCalls.map((c) => c.name + c.arguments).join(''));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(reasoning ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
  };
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters of [A-Za-z0-9], drawn from the seeded `random`. */
export function randomId(random: () => number, length = 24): string {
  let id = '';
  for (let i = 0; i < length; i++) id += ID_ALPHABET[Math.floor(random() * ID_ALPHABET.length)];
  return id;
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
