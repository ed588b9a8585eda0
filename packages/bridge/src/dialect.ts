/**
 * A dialect is a daemon's SSE vocabulary written as data: where an event's type is read, which types mean text,
 * reasoning, a tool call, a tool result, usage, start, done or error, and which fields carry their values.
 * `defineDialect()` turns that table into a reader of normalized {@link BridgeEvent}s and an upstream request builder.
 */
import { ApiError, ProtocolError, StreamIncompleteError, type StreamSource, type Usage } from '@ai4ts/core';
import {
  addUsage,
  isRecord,
  readErrorResponse,
  redact,
  scrubJson,
  sseEventsOf,
  toAi4tsError,
} from '@ai4ts/core/internal';
import { CompletionBuilder } from './completion.js';
import type { BridgeEvent } from './events.js';

/** What a daemon's event means, and the fields of its JSON data that carry the values. */
export type EventRule =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  /** A tool call the daemon made; `arguments` holds a JSON string (an object is stringified). */
  | { kind: 'tool_call'; id: string; name: string; arguments: string }
  /** A tool the daemon ran; `success: false` marks an error result. */
  | { kind: 'tool_result'; id: string; name: string; output: string; success?: string; durationMs?: string }
  /** One inference round's usage, read with the dialect's `usageFields`; rounds are summed. */
  | { kind: 'usage' }
  | { kind: 'start'; sessionId?: string; messageId?: string }
  /** The terminal event; `usage` names the field holding the daemon's own total. */
  | { kind: 'done'; sessionId?: string; messageId?: string; usage?: string }
  /** The daemon failed: the answer fails even if `done` follows. Its data is read as a provider error body. */
  | { kind: 'error' };

/** What the proxy knows when it builds the upstream request. */
export interface UpstreamInput {
  /** The last user message's text parts, joined with a newline. */
  message: string;
  /** The session id: the request's `metadata.session_id`, else `user`, else a new UUID when the dialect requires one. */
  sessionId: string | undefined;
  /** The whole validated OpenAI request, for dialects that want more of it. */
  request: Record<string, unknown>;
}

/** A dialect written as data; see {@link defineDialect}. */
export interface DialectSpec {
  /** A short name (used in errors and `/v1/models`). */
  name: string;
  /** The JSON field that holds each event's type (`"type"`); omit it to use the SSE `event:` name. */
  typeField?: string;
  /** Event types by the daemon's name for them. Other types surface as `unknown` events. */
  events: Record<string, EventRule>;
  /** Field names of a usage object; `{ prompt: 'prompt', completion: 'completion', total: 'total' }` by default. */
  usageFields?: { prompt: string; completion: string; total: string };
  /** `'required'`: the proxy invents a UUID session id when the request carries none. Default `'optional'`. */
  session?: 'optional' | 'required';
  /** The JSON body posted to the daemon. */
  request(input: UpstreamInput): unknown;
}

/** Options of a dialect reader. */
export interface ReadOptions {
  /** Aborting stops the read and releases the body (an AbortError is thrown). */
  signal?: AbortSignal;
  /** Largest SSE event accepted, in characters (@ai4ts/sse's default otherwise). */
  maxEventSize?: number;
  /**
   * Strings scrubbed (as `[redacted]`) from what the daemon echoes back in a failure: an HTTP error body or an
   * error event. Pass the token you sent upstream, so that it never reaches an error message.
   */
  secrets?: readonly string[];
}

/** A dialect: its spec, and a reader of its streams. */
export interface Dialect extends DialectSpec {
  /**
   * Reads a daemon's stream, in any {@link StreamSource} form (a Response, whose non-2xx status becomes the typed
   * ApiError; a web stream or async iterable of bytes or text; or the whole stream as one string), into bridge
   * events; the events and the failure do not depend on the form or on how the stream was cut. Unknown types
   * surface as `unknown` events. Failures throw, each with `partial` (the completion so far): the daemon's error
   * event (ApiError), a stream that ends before its done event (StreamIncompleteError), data that is not JSON or an
   * oversized event (ProtocolError), a broken body (ConnectionError), an abort (AbortError).
   */
  read(source: StreamSource, options?: ReadOptions): AsyncIterable<BridgeEvent>;
}

const DEFAULT_USAGE_FIELDS = { prompt: 'prompt', completion: 'completion', total: 'total' };

/**
 * Makes a dialect from its table. A third dialect takes a few lines:
 * ```ts
 * const mine = defineDialect({
 *   name: 'mine',
 *   typeField: 'kind',
 *   events: { delta: { kind: 'text', text: 'token' }, end: { kind: 'done' }, fail: { kind: 'error' } },
 *   request: ({ message }) => ({ prompt: message }),
 * });
 * ```
 */
export function defineDialect(spec: DialectSpec): Dialect {
  return { ...spec, read: (source, options) => readDialect(spec, source, options) };
}

async function* readDialect(
  spec: DialectSpec,
  source: StreamSource,
  options: ReadOptions = {},
): AsyncGenerator<BridgeEvent> {
  const { signal, maxEventSize, secrets = [] } = options;
  if (source instanceof Response && !source.ok)
    throw await readErrorResponse(source, { signal, secrets });
  const builder = new CompletionBuilder();
  const usageFields = spec.usageFields ?? DEFAULT_USAGE_FIELDS;
  let toolIndex = 0;
  let usage: Usage | undefined;

  // Maps one daemon event to bridge events; `done` ends the read.
  const map = (name: string, data: Record<string, unknown>): BridgeEvent[] => {
    const rule = Object.hasOwn(spec.events, name) ? spec.events[name] : undefined;
    switch (rule?.kind) {
      case undefined:
        return [{ type: 'unknown', name, data }];
      case 'text': {
        const delta = text(data[rule.text]);
        return delta ? [{ type: 'content', delta, snapshot: builder.content + delta, choice: 0 }] : [];
      }
      case 'reasoning': {
        const delta = text(data[rule.text]);
        return delta ? [{ type: 'reasoning', delta, snapshot: builder.reasoning + delta, choice: 0 }] : [];
      }
      case 'tool_call': {
        const index = toolIndex++;
        const id = text(data[rule.id]) || `call_${index}`;
        const name = text(data[rule.name]);
        const raw = data[rule.arguments];
        const args = typeof raw === 'string' ? raw : raw === undefined || raw === null ? '' : JSON.stringify(raw);
        const events: BridgeEvent[] = [{ type: 'tool_call.start', index, id, name, choice: 0 }];
        if (args) events.push({ type: 'tool_call.delta', index, id, delta: args, choice: 0 });
        events.push({ type: 'tool_call.done', index, id, name, arguments: args || '{}', choice: 0 });
        return events;
      }
      case 'tool_result': {
        const duration = rule.durationMs === undefined ? undefined : data[rule.durationMs];
        return [
          {
            type: 'tool.result',
            id: text(data[rule.id]),
            name: text(data[rule.name]),
            output: data[rule.output],
            isError: rule.success !== undefined && data[rule.success] === false,
            ...(typeof duration === 'number' ? { durationMs: duration } : {}),
          },
        ];
      }
      case 'usage': {
        const round = readUsage(data, usageFields);
        usage = addUsage(usage, round) ?? round;
        return [{ type: 'usage', usage, raw: data }];
      }
      case 'start':
        return [
          {
            type: 'start',
            sessionId: optionalText(data, rule.sessionId),
            messageId: optionalText(data, rule.messageId),
          },
        ];
      case 'done': {
        const total = rule.usage === undefined ? undefined : data[rule.usage];
        return [
          { type: 'finish', finishReason: 'stop', choice: 0 },
          {
            type: 'done',
            sessionId: optionalText(data, rule.sessionId),
            messageId: optionalText(data, rule.messageId),
            usage: isRecord(total) ? readUsage(total, usageFields) : undefined,
            raw: data,
          },
        ];
      }
      case 'error': {
        const payload = scrubRecord(data, secrets); // a daemon may quote the token it was sent
        if (spec.typeField !== undefined) delete payload[spec.typeField];
        throw ApiError.fromStreamError(payload, builder.completion());
      }
    }
  };

  try {
    // A chunk's worth of SSE events at a time: one await per upstream chunk, not one per event.
    for await (const batch of sseEventsOf(source, { signal, maxEventSize }).batches()) {
      for (const sse of batch) {
        const data = sse.data === '' ? {} : parseData(sse.data, builder, secrets); // an empty block carries only its name
        const name = spec.typeField === undefined ? sse.event : text(data[spec.typeField]);
        for (const event of map(name, data)) {
          builder.add(event);
          yield event;
          if (event.type === 'done') return;
        }
      }
    }
  } catch (error) {
    throw toAi4tsError(error, { signal, partial: builder.completion() });
  }
  throw new StreamIncompleteError(`The ${spec.name} stream ended before its done event`, {
    partial: builder.completion(),
  });
}

/** The event's data as a JSON object; a ProtocolError otherwise, whose line and cause name no secret. */
function parseData(data: string, builder: CompletionBuilder, secrets: readonly string[]): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (error) {
    // V8's SyntaxError quotes the text it could not parse.
    const cause = new SyntaxError(redact(error instanceof Error ? error.message : String(error), secrets));
    throw new ProtocolError('Daemon event data is not JSON', {
      cause,
      line: redact(data, secrets),
      partial: builder.completion(),
    });
  }
  if (!isRecord(value))
    throw new ProtocolError('Daemon event data is not a JSON object', {
      line: redact(data, secrets),
      partial: builder.completion(),
    });
  return value;
}

/** A copy of an event's data with every secret replaced in every string and key, however deep. */
function scrubRecord(data: Record<string, unknown>, secrets: readonly string[]): Record<string, unknown> {
  const scrubbed = scrubJson(data, secrets);
  return isRecord(scrubbed) ? scrubbed : {};
}

function readUsage(
  data: Record<string, unknown>,
  fields: { prompt: string; completion: string; total: string },
): Usage {
  const prompt = count(data[fields.prompt]);
  const completion = count(data[fields.completion]);
  const total = data[fields.total];
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof total === 'number' ? total : prompt + completion,
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function optionalText(data: Record<string, unknown>, field: string | undefined): string | undefined {
  const value = field === undefined ? undefined : data[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
