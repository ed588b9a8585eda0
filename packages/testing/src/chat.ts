/**
 * OpenAI Chat Completions as a scripted model answers it: one scripted turn becomes either a `chat.completion`
 * or the `chat.completion.chunk` sequence a real provider streams, fragmented the way providers fragment.
 */
import { asciiJson, splitText } from './fragment.js';

/** A message of a Chat Completions request, as far as scripts need to read it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  reasoning_content?: string;
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** The body of a `POST /v1/chat/completions` request. */
export interface ChatRequestBody {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: unknown[];
  [key: string]: unknown;
}

/** A tool call the scripted model makes. */
export interface MockToolCall {
  /** Generated (`call_…`) when absent. */
  id?: string;
  name: string;
  /** Sent exactly as given when a string; an object is sent as JSON with non-ASCII characters `\uXXXX`-escaped. */
  arguments: string | Record<string, unknown>;
}

/** Token usage in the Chat Completions shape. */
export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  [key: string]: unknown;
}

/** What the scripted model answers to one request. */
export interface MockTurn {
  /** Streamed as `reasoning_content` deltas before the content (DeepSeek style). */
  reasoning?: string;
  content?: string;
  /** Parallel tool calls; streamed interleaved, arguments cut at arbitrary places. */
  toolCalls?: MockToolCall[];
  /** `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Estimated from the text lengths when absent (about 4 characters a token). */
  usage?: MockUsage;
  /** Wait this long before each streamed chunk. */
  chunkDelayMs?: number;
  /** Answer with this HTTP status and body instead (body default: an OpenAI-style error object). */
  httpError?: { status: number; body?: unknown };
  /** Streaming: after the turn's deltas, send this error object as a data event and end the stream. */
  streamError?: { message: string; type?: string; code?: string };
  /** Streaming: stop after this many data events, without `[DONE]`; `reset` destroys the connection instead of ending it. */
  cutOff?: { afterChunks: number; reset?: boolean };
}

/** A turn with everything decided: call ids, argument strings, finish reason, usage. */
export interface ResolvedTurn {
  reasoning: string;
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string;
  usage: MockUsage;
}

/** Fills in a turn's defaults. `random` makes call ids. */
export function resolveTurn(turn: MockTurn, body: ChatRequestBody, random: () => number): ResolvedTurn {
  const reasoning = turn.reasoning ?? '';
  const content = turn.content ?? '';
  const toolCalls = (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? `call_${randomId(random)}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : asciiJson(call.arguments),
  }));
  const finishReason = turn.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop');
  return { reasoning, content, toolCalls, finishReason, usage: turn.usage ?? estimateUsage(body, reasoning, content, toolCalls) };
}

/** The non-streamed answer: a `chat.completion` object. */
export function chatCompletion(turn: ResolvedTurn, body: ChatRequestBody, id: string, created: number) {
  return {
    id,
    object: 'chat.completion',
    created,
    model: body.model ?? 'mock-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: turn.content === '' && turn.toolCalls.length ? null : turn.content,
          ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
          ...(turn.toolCalls.length
            ? {
                tool_calls: turn.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: turn.finishReason,
        logprobs: null,
      },
    ],
    usage: turn.usage,
  };
}

/**
 * The streamed answer: the `chat.completion.chunk` payloads in order (without the final `[DONE]`). Reasoning and
 * content come in deltas of 1-6 characters; parallel tool calls start in index order but their argument fragments
 * (1-8 characters, cut anywhere) interleave; a usage chunk with `choices: []` ends the stream when
 * `stream_options.include_usage` is set.
 */
export function chatChunks(
  turn: ResolvedTurn,
  body: ChatRequestBody,
  id: string,
  created: number,
  random: () => number,
): Record<string, unknown>[] {
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: body.model ?? 'mock-model',
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(includeUsage ? { usage: null } : {}),
  });

  const chunks: Record<string, unknown>[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of splitText(turn.reasoning, random, 1, 6)) chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of splitText(turn.content, random, 1, 6)) chunks.push(chunk({ content: piece }));

  const fragments = turn.toolCalls.map((call) => splitText(call.arguments, random, 1, 8));
  const sent = turn.toolCalls.map(() => 0);
  let started = 0;
  for (;;) {
    // Calls start in index order; any started call with fragments left may send next.
    const ready = fragments.flatMap((list, index) => (index < started && (sent[index] ?? 0) < list.length ? [index] : []));
    const canStart = started < turn.toolCalls.length;
    if (!ready.length && !canStart) break;
    const pick = Math.floor(random() * (ready.length + (canStart ? 1 : 0)));
    const index = ready[pick];
    if (index === undefined) {
      const call = turn.toolCalls[started];
      chunks.push(
        chunk({
          tool_calls: [
            { index: started, id: call?.id, type: 'function', function: { name: call?.name, arguments: '' } },
          ],
        }),
      );
      started++;
    } else {
      const piece = fragments[index]?.[sent[index] ?? 0];
      sent[index] = (sent[index] ?? 0) + 1;
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }

  chunks.push(chunk({}, turn.finishReason));
  if (includeUsage)
    chunks.push({ id, object: 'chat.completion.chunk', created, model: body.model ?? 'mock-model', choices: [], usage: turn.usage });
  return chunks;
}

function estimateUsage(
  body: ChatRequestBody,
  reasoning: string,
  content: string,
  toolCalls: ResolvedTurn['toolCalls'],
): MockUsage {
  const tokens = (text: string) => Math.ceil(text.length / 4);
  const prompt = tokens(JSON.stringify(body.messages));
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

function randomId(random: () => number): string {
  let id = '';
  for (let i = 0; i < 24; i++) id += ID_ALPHABET[Math.floor(random() * ID_ALPHABET.length)];
  return id;
}
