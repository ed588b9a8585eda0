/**
 * Reading untrusted JSON (the data of a stream event, the body of a `create` answer) into the wire types: the one
 * place where unknown data becomes typed, with cheap checks of the fields ai4ts relies on. Every field the API sent
 * beside the typed ones is kept. A check that fails throws a ProtocolError whose `line` holds the data.
 */
import { ProtocolError } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type {
  AnyContentBlock,
  ContentBlockDeltaEvent,
  ErrorStreamEvent,
  Message,
  MessageDeltaEvent,
  MessageUsage,
  RawMessageStreamEvent,
} from './types.js';

/**
 * One event's data as a typed event; `undefined` for an event or delta type ai4ts does not know, which the
 * listener skips. Throws ProtocolError for a known type with missing or mistyped fields.
 *
 * The events of every token (deltas, stops, pings) are checked in place and returned as parsed, with no copy.
 */
export function readEvent(data: Record<string, unknown>): RawMessageStreamEvent | undefined {
  switch (data.type) {
    case 'content_block_delta':
      return isDeltaEvent(data) ? data : undefined;
    case 'content_block_stop':
      readIndex(data);
      return isEvent(data, 'content_block_stop') ? data : undefined;
    case 'ping':
      return isEvent(data, 'ping') ? data : undefined;
    case 'message_stop':
      return isEvent(data, 'message_stop') ? data : undefined;
    case 'message_start': {
      const line = lineOf(data);
      if (!isRecord(data.message)) throw protocolError('message_start without a message', line());
      return { ...data, type: 'message_start', message: readMessage(data.message, line) };
    }
    case 'content_block_start': {
      const line = lineOf(data);
      if (!isRecord(data.content_block)) throw protocolError('content_block_start without a content_block', line());
      return {
        ...data,
        type: 'content_block_start',
        index: readIndex(data),
        content_block: readBlock(data.content_block, line),
      };
    }
    case 'message_delta':
      return readMessageDelta(data, lineOf(data));
    case 'error':
      return readErrorEvent(data);
  }
  return undefined;
}

/** The data as an error's `line`, serialized only when an error needs it. */
function lineOf(data: Record<string, unknown>): () => string {
  return () => JSON.stringify(data);
}

/** An event whose fields beside `type` were checked (or that has none). */
function isEvent<Type extends 'content_block_stop' | 'ping' | 'message_stop'>(
  data: Record<string, unknown>,
  type: Type,
): data is Record<string, unknown> & Extract<RawMessageStreamEvent, { type: Type }> {
  return data.type === type;
}

/**
 * A content_block_delta checked in place: false for a delta type ai4ts does not know. Throws ProtocolError for a
 * bad index, a missing delta or a known delta without its field.
 */
function isDeltaEvent(data: Record<string, unknown>): data is Record<string, unknown> & ContentBlockDeltaEvent {
  readIndex(data);
  const { delta } = data;
  if (!isRecord(delta)) throw protocolError('content_block_delta without a delta', JSON.stringify(data));
  return isKnownDelta(delta, data);
}

function isKnownDelta(delta: Record<string, unknown>, data: Record<string, unknown>): boolean {
  switch (delta.type) {
    // Each field read by its name, not by a variable key: a keyed read of many names is a slow (megamorphic) one.
    case 'text_delta':
      return typeof delta.text === 'string' || missing(delta, 'text', data);
    case 'thinking_delta':
      return typeof delta.thinking === 'string' || missing(delta, 'thinking', data);
    case 'signature_delta':
      return typeof delta.signature === 'string' || missing(delta, 'signature', data);
    case 'input_json_delta':
      return typeof delta.partial_json === 'string' || missing(delta, 'partial_json', data);
    case 'citations_delta': {
      const { citation } = delta;
      if (!isRecord(citation) || typeof citation.type !== 'string')
        throw protocolError('A citations_delta without a citation', JSON.stringify(data));
      return true;
    }
  }
  return false;
}

/** A known delta without its string field: a ProtocolError. */
function missing(delta: Record<string, unknown>, name: string, data: Record<string, unknown>): never {
  throw protocolError(`A ${String(delta.type)} without its ${name}`, JSON.stringify(data));
}

/**
 * The body of a non-streaming answer as a Message. Throws ProtocolError when it is not a message (no
 * `type: 'message'`, no `content` array) or a known block is malformed.
 */
export function readCreatedMessage(json: unknown, text: string): Message {
  if (!isRecord(json) || json.type !== 'message' || !Array.isArray(json.content))
    throw protocolError('The response is not a Messages message', text);
  return readMessage(json, () => text);
}

/**
 * A message as message_start (or a `create` answer) carries it. Lenient where a proxy may leave a field out
 * (`id`, `model`, `usage` counters), strict on the blocks.
 */
function readMessage(message: Record<string, unknown>, line: () => string): Message {
  const content = Array.isArray(message.content) ? message.content : [];
  const usage = isRecord(message.usage) ? message.usage : {};
  return {
    ...message,
    id: typeof message.id === 'string' ? message.id : '',
    type: 'message',
    role: 'assistant',
    model: typeof message.model === 'string' ? message.model : '',
    content: content.map((block: unknown) => {
      if (!isRecord(block)) throw protocolError('A content block is not an object', line());
      return readBlock(block, line);
    }),
    stop_reason: readNullableString(message.stop_reason, 'stop_reason', line) ?? null,
    stop_sequence: readNullableString(message.stop_sequence, 'stop_sequence', line) ?? null,
    usage: readUsage(usage),
  };
}

function readUsage(usage: Record<string, unknown>): MessageUsage {
  return {
    ...usage,
    input_tokens: typeof usage.input_tokens === 'number' ? usage.input_tokens : 0,
    output_tokens: typeof usage.output_tokens === 'number' ? usage.output_tokens : 0,
  };
}

/** A content block: a known type with its fields checked, any other type as sent. */
function readBlock(block: Record<string, unknown>, line: () => string): AnyContentBlock {
  const { type } = block;
  switch (type) {
    case 'text':
      // The API starts text empty; a missing text is read as empty.
      return { ...block, type, text: typeof block.text === 'string' ? block.text : '' };
    case 'thinking':
      return {
        ...block,
        type,
        thinking: typeof block.thinking === 'string' ? block.thinking : '',
        signature: typeof block.signature === 'string' ? block.signature : '',
      };
    case 'redacted_thinking':
      if (typeof block.data !== 'string') throw protocolError('A redacted_thinking block without data', line());
      return { ...block, type, data: block.data };
    case 'tool_use':
    case 'server_tool_use':
      if (typeof block.id !== 'string' || typeof block.name !== 'string')
        throw protocolError(`A ${type} block without an id and a name`, line());
      return { ...block, type, id: block.id, name: block.name, input: isRecord(block.input) ? block.input : {} };
    case 'web_search_tool_result': {
      const { content } = block;
      if (typeof block.tool_use_id !== 'string' || !(Array.isArray(content) || isRecord(content)))
        throw protocolError('A web_search_tool_result block without a tool_use_id and content', line());
      // The results are the server's (encrypted, sent back as they came): kept as sent, checked no further.
      return { ...block, type, tool_use_id: block.tool_use_id };
    }
  }
  if (typeof type !== 'string') throw protocolError('A content block without a type', line());
  return { ...block, type };
}

function readMessageDelta(data: Record<string, unknown>, line: () => string): MessageDeltaEvent {
  const delta = isRecord(data.delta) ? data.delta : {};
  readNullableString(delta.stop_reason, 'stop_reason', line);
  readNullableString(delta.stop_sequence, 'stop_sequence', line);
  // Checked above; every other field of the delta is a message field the API changed (`container`, ...).
  const event: MessageDeltaEvent = { ...data, type: 'message_delta', delta: { ...delta } };
  if (isRecord(data.usage)) event.usage = data.usage;
  else delete event.usage;
  return event;
}

/** An in-stream error; its body is read by core's `ApiError.fromStreamError`, which tolerates any shape. */
function readErrorEvent(data: Record<string, unknown>): ErrorStreamEvent {
  const error = isRecord(data.error) ? data.error : {};
  return {
    ...data,
    type: 'error',
    error: {
      ...error,
      type: typeof error.type === 'string' ? error.type : 'error',
      message: typeof error.message === 'string' ? error.message : 'The stream reported an error',
    },
  };
}

function readIndex(data: Record<string, unknown>): number {
  const { index } = data;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0)
    throw protocolError(`${String(data.type)} without a valid index`, JSON.stringify(data));
  return index;
}

function readNullableString(value: unknown, name: string, line: () => string): string | null | undefined {
  if (value === undefined || value === null || typeof value === 'string') return value;
  throw protocolError(`${name} is not a string`, line());
}

function protocolError(message: string, line: string): ProtocolError {
  return new ProtocolError(message, { line });
}
