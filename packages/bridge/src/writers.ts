/**
 * Writers: bridge events out as OpenAI `chat.completion.chunk` SSE, as one `chat.completion`, or as the
 * named-event dialect. A failure before any output is thrown (a server can still answer with an HTTP error);
 * after output began it is written into the stream, and the stream ends without its success terminator.
 */
import { AbortError, ApiError, ConnectionError, ProtocolError, StreamIncompleteError, TimeoutError } from '@ai4ts/core';
import { assertNever, toAi4tsError } from '@ai4ts/core/internal';
import type { SseMessage } from '@ai4ts/sse';
import { type BridgeCompletion, CompletionBuilder, type CompletionOptions } from './completion.js';
import type { BridgeEvent } from './events.js';

/** An error in OpenAI's shape: the `error` member of an error body or of an in-stream error chunk. */
export interface OpenAIErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** Options of {@link toOpenAISse}. */
export interface OpenAIStreamOptions extends CompletionOptions {
  /** Send a last chunk with `choices: []` and the usage, as OpenAI does for `stream_options.include_usage`. */
  includeUsage?: boolean;
  /**
   * Vendor fields for the finish chunk's delta, read once the events ended well (the gateway's `thinking_blocks`):
   * clients that keep an unknown delta field's last value (openai's stream helper) get them on the message.
   */
  finishDelta?: () => Record<string, unknown> | undefined;
}

/**
 * Bridge events to OpenAI `chat.completion.chunk` SSE messages: `content`, `reasoning_content`, tool calls
 * (see {@link CompletionOptions.toolCalls}: daemon-run tools go under the vendor delta field `daemon_tools`, entries
 * keyed by index), a finish chunk (carrying `session_id`, and every daemon tool merged in one `daemon_tools`), the
 * usage chunk when asked and known, then `data: [DONE]`.
 * A failure after output began becomes a `data: {"error": {...}}` chunk and no `[DONE]`.
 */
export async function* toOpenAISse(
  events: AsyncIterable<BridgeEvent>,
  options: OpenAIStreamOptions = {},
): AsyncGenerator<SseMessage> {
  const state = new CompletionBuilder(options);
  const extra = options.includeUsage ? { usage: null } : {};
  const chunk = (
    delta: Record<string, unknown>,
    finishReason: string | null = null,
    tail: object = {},
  ): SseMessage => ({
    data: JSON.stringify({
      id: state.id,
      object: 'chat.completion.chunk',
      created: state.created,
      model: state.model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
      ...extra,
      ...tail,
    }),
  });
  // A delta chunk is the text of `chunk(delta)` with its fixed members written once: the proxy's hot path then
  // serializes only the delta (the whole object per event was a tenth of the proxy's CPU time).
  const head = `{"id":${JSON.stringify(state.id)},"object":"chat.completion.chunk","created":${JSON.stringify(state.created)},"model":${JSON.stringify(state.model)},"choices":[{"index":0,"delta":`;
  const foot = `,"finish_reason":null,"logprobs":null}]${options.includeUsage ? ',"usage":null' : ''}}`;
  const deltaChunk = (delta: Record<string, unknown>): SseMessage => ({ data: `${head}${JSON.stringify(delta)}${foot}` });
  // A text delta after the first is the same text without a delta object to build and walk: only the string is
  // serialized (the proxy's hot path).
  const textChunk = (field: 'content' | 'reasoning_content', text: string): SseMessage => ({
    data: `${head}{"${field}":${JSON.stringify(text)}}${foot}`,
  });
  const indexes = new Map<string, number>();
  const indexOf = (id: string) => {
    const index = indexes.get(id) ?? indexes.size;
    indexes.set(id, index);
    return index;
  };
  const daemon = state.toolCalls === 'daemon';
  let began = false;

  try {
    for await (const event of events) {
      if (event.type === 'error') throw event.error;
      // The text goes out as it comes and is not kept: only what the last chunks repeat (tools, usage, finish).
      if (began && (event.type === 'content' || event.type === 'reasoning')) {
        yield textChunk(event.type === 'content' ? 'content' : 'reasoning_content', event.delta);
        continue;
      }
      if (event.type !== 'content' && event.type !== 'reasoning') state.add(event);
      let delta: Record<string, unknown> | undefined;
      switch (event.type) {
        case 'content':
          delta = { content: event.delta };
          break;
        case 'reasoning':
          delta = { reasoning_content: event.delta };
          break;
        case 'tool_call.start':
          if (!daemon)
            delta = {
              tool_calls: [
                {
                  index: indexOf(event.id),
                  id: event.id,
                  type: 'function',
                  function: { name: event.name, arguments: '' },
                },
              ],
            };
          break;
        case 'tool_call.delta':
          if (!daemon) delta = { tool_calls: [{ index: indexOf(event.id), function: { arguments: event.delta } }] };
          break;
        case 'tool_call.done':
          if (daemon)
            delta = {
              daemon_tools: [{ index: indexOf(event.id), id: event.id, name: event.name, arguments: event.arguments }],
            };
          break;
        case 'tool.result':
          if (daemon) {
            const result: Record<string, unknown> = {
              index: indexOf(event.id),
              id: event.id,
              name: event.name,
              output: event.output,
              is_error: event.isError,
            };
            if (event.durationMs !== undefined) result.duration_ms = event.durationMs;
            delta = { daemon_tools: [result] };
          }
          break;
        // No delta: `state` folded them in above, and the last chunk writes its usage, finish and session.
        case 'usage':
        case 'finish':
        case 'start':
        case 'done':
        // No Chat Completions field carries these.
        case 'tool.progress':
        case 'reasoning.signature':
        case 'unknown':
          break;
        default:
          assertNever(event);
      }
      if (!delta) continue;
      yield deltaChunk(began ? delta : { role: 'assistant', ...delta });
      began = true;
    }
  } catch (error) {
    if (!began) throw error;
    yield { data: JSON.stringify({ error: openAIErrorObject(error) }) };
    return;
  }
  const session = state.sessionId === undefined ? {} : { session_id: state.sessionId };
  const last: Record<string, unknown> = { ...(began ? {} : { role: 'assistant', content: '' }), ...options.finishDelta?.() };
  // Clients that keep only the last value of an unknown delta field (openai's stream helper assigns it) must still
  // get every daemon tool: the finish chunk repeats them all, merged, under the indexes already sent.
  if (daemon && state.tools.size > 0)
    last.daemon_tools = [...state.tools.values()].map((tool) => ({ index: indexOf(tool.id), ...tool }));
  yield chunk(last, state.finalReason, session);
  if (options.includeUsage && state.usage) {
    yield {
      data: JSON.stringify({
        id: state.id,
        object: 'chat.completion.chunk',
        created: state.created,
        model: state.model,
        choices: [],
        usage: state.usage,
        ...session,
      }),
    };
  }
  yield { data: '[DONE]' };
}

/**
 * Bridge events to one aggregated `chat.completion`. Throws the stream's failure with `partial` set to the
 * completion so far.
 */
export async function toOpenAICompletion(
  events: AsyncIterable<BridgeEvent>,
  options: CompletionOptions = {},
): Promise<BridgeCompletion> {
  const state = new CompletionBuilder(options);
  try {
    for await (const event of events) {
      if (event.type === 'error') throw event.error;
      state.add(event);
    }
  } catch (error) {
    const failure = toAi4tsError(error);
    failure.partial = state.completion(); // this writer's completion (its id and model), whatever the source set
    throw failure;
  }
  return state.completion(true);
}

/** Options of {@link toNamedEventSse}. */
export interface NamedEventOptions {
  /** The message id to announce when the events carry none; a new UUID by default. */
  messageId?: string;
}

/**
 * Bridge events to the named-event dialect: `start {message_id}`, one `message {content}` per text delta,
 * `done {message_id}` (null when nothing was produced); after output began a failure is `error {error, type}` and
 * no `done`. Reasoning, tools and usage have no place in this dialect and are dropped.
 */
export async function* toNamedEventSse(
  events: AsyncIterable<BridgeEvent>,
  options: NamedEventOptions = {},
): AsyncGenerator<SseMessage> {
  let messageId: string | undefined;
  let started = false;
  const start = (): SseMessage => {
    started = true;
    return { event: 'start', data: JSON.stringify({ message_id: messageId ?? null }) };
  };
  try {
    for await (const event of events) {
      if (event.type === 'error') throw event.error;
      if (event.type === 'start') {
        messageId = event.messageId ?? messageId;
        if (!started) yield start();
      } else if (event.type === 'content') {
        messageId ??= options.messageId ?? crypto.randomUUID();
        if (!started) yield start();
        yield { event: 'message', data: JSON.stringify({ content: event.delta }) };
      } else if (event.type === 'done') {
        messageId = event.messageId ?? messageId;
      }
    }
  } catch (error) {
    if (!started) throw error;
    const { message, code, type } = openAIErrorObject(error);
    yield { event: 'error', data: JSON.stringify({ error: message, type: code ?? type }) };
    return;
  }
  if (!started) yield start();
  yield { event: 'done', data: JSON.stringify({ message_id: messageId ?? null }) };
}

/**
 * Reads a stream failure into OpenAI's error object: type `upstream_error`, and as code the daemon's own code for
 * its error events, else what went wrong (`stream_incomplete`, `upstream_protocol_error`, `upstream_timeout_idle`,
 * ...).
 */
export function openAIErrorObject(error: unknown): OpenAIErrorObject {
  const message = error instanceof Error ? error.message : String(error);
  return { message, type: 'upstream_error', param: null, code: codeOf(error) };
}

function codeOf(error: unknown): string | null {
  if (error instanceof ApiError) return error.code ?? null;
  if (error instanceof StreamIncompleteError) return 'stream_incomplete';
  if (error instanceof ProtocolError) return 'upstream_protocol_error';
  if (error instanceof ConnectionError) return 'upstream_connection_error';
  if (error instanceof TimeoutError) return `upstream_timeout_${error.phase === 'first_token' ? 'first_event' : error.phase}`;
  if (error instanceof AbortError) return 'aborted';
  return null;
}
