/**
 * Folds the events of one Anthropic Messages stream into a message, and emits ai4ts's normalized stream events.
 */
import { type Ai4tsError, ApiError, type ContentEvent, type ErrorEvent, type FinishEvent, ProtocolError, type ReasoningEvent, StreamIncompleteError, type ToolCallDeltaEvent, type ToolCallDoneEvent, type ToolCallStartEvent, type UsageEvent } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { EventEmitter } from 'eventemitter3';
import { toChatUsage, toFinishReason } from './chat.js';
import type {
  ContentBlock,
  Message,
  MessageStreamEvent,
  MessageUsage,
  StopReason,
  TextBlock,
  ThinkingBlock,
  ToolUseBlock,
} from './types.js';

/** `pending` until message_start, `completed` only after message_stop, `failed` after any error. */
export type MessagesListenerStatus = 'pending' | 'streaming' | 'completed' | 'failed';

/** What a {@link MessagesStreamListener} emits: the normalized events, the raw `event`, and the final `message`. */
export interface MessagesListenerEvents {
  content: (event: ContentEvent) => void;
  /** Thinking deltas. */
  reasoning: (event: ReasoningEvent) => void;
  /** A client tool_use block started (server_tool_use blocks emit no tool_call events: the server runs them). */
  'tool_call.start': (event: ToolCallStartEvent) => void;
  'tool_call.delta': (event: ToolCallDeltaEvent) => void;
  'tool_call.done': (event: ToolCallDoneEvent) => void;
  /** At message_start (input counts) and at message_delta (final counts), in the chat shape; `raw` is Anthropic's. */
  usage: (event: UsageEvent) => void;
  /** At message_stop, with the stop reason mapped by {@link toFinishReason}. */
  finish: (event: FinishEvent) => void;
  error: (event: ErrorEvent) => void;
  /** Every accepted raw event, after it was applied. */
  event: (event: MessageStreamEvent) => void;
  /** The complete message, at message_stop. */
  message: (message: Message) => void;
}

/** A block that has started and not yet stopped. */
interface OpenBlock {
  block: ContentBlock;
  /** The tool input text as streamed so far (tool_use and server_tool_use). */
  json: string;
  /** Position among client tool_use blocks, or -1. */
  toolIndex: number;
}

const CUT_OFF = 'The tool input was cut off before its block finished';

/**
 * The Messages stream state machine. Feed it the `data` of each SSE event with {@link push} (or the SSE event with
 * {@link pushSse}); it keeps {@link message}, {@link text}, {@link thinking}, {@link toolUses}, {@link stopReason},
 * {@link usage}, {@link status} and {@link events}, and emits {@link MessagesListenerEvents}.
 *
 * The rules: only message_stop completes a stream; events after it are ignored; a second message_start is a
 * ProtocolError; an `error` event throws an ApiError (`code` and `type` = `error.type`) whose `partial` is the message
 * so far (null before message_start). Tool inputs are parsed when their block stops; an input that is not a JSON
 * object leaves `input: {}` and sets `input_error`. Usage starts from message_start's and every non-null counter of
 * message_delta replaces its value. Unknown block types are kept; unknown delta and event types change nothing.
 */
export class MessagesStreamListener extends EventEmitter<MessagesListenerEvents> {
  /** Every accepted event, in arrival order. */
  readonly events: MessageStreamEvent[] = [];
  #status: MessagesListenerStatus = 'pending';
  #message: Message | null = null;
  #content: ContentBlock[] = [];
  #open = new Map<number, OpenBlock>();
  #toolCount = 0;
  #textSoFar = '';
  #thinkingSoFar = '';
  #error: Ai4tsError | undefined;

  /** Where the stream is. */
  get status(): MessagesListenerStatus {
    return this.#status;
  }

  /** The message being built (the live object), null before message_start. Open tool inputs read `{}`. */
  get message(): Message | null {
    return this.#message;
  }

  /** The text blocks joined in index order, nothing between. */
  get text(): string {
    return this.#join('text');
  }

  /** The thinking blocks joined in index order, nothing between. */
  get thinking(): string {
    return this.#join('thinking');
  }

  /** The client tool_use blocks in index order (server_tool_use blocks stay only in `message.content`). */
  get toolUses(): ToolUseBlock[] {
    return this.#content.filter((block): block is ToolUseBlock => block?.type === 'tool_use');
  }

  /** The stop reason once message_delta gave it. */
  get stopReason(): StopReason | null {
    return this.#message?.stop_reason ?? null;
  }

  /** Anthropic usage: message_start's, with message_delta's non-null counters replacing it. */
  get usage(): MessageUsage | null {
    return this.#message?.usage ?? null;
  }

  /** The error that failed the stream, if any. */
  get error(): Ai4tsError | undefined {
    return this.#error;
  }

  /**
   * Applies one event (the parsed `data` of an SSE event), dispatching on its `type`.
   * Throws ApiError for an `error` event and ProtocolError for data that breaks the protocol, after marking the
   * listener failed and emitting `error`.
   */
  push(event: MessageStreamEvent | { type: string }): void {
    if (this.#status === 'completed' || this.#status === 'failed') return;
    const data = event as unknown as Record<string, unknown>;
    switch (data.type) {
      case 'content_block_delta':
        this.#started(data);
        this.#delta(data);
        break;
      case 'content_block_start':
        this.#started(data);
        this.#start(data);
        break;
      case 'content_block_stop':
        this.#started(data);
        this.#stop(this.#index(data), data);
        break;
      case 'message_start':
        this.#messageStart(data);
        break;
      case 'message_delta':
        this.#started(data);
        this.#messageDelta(data);
        break;
      case 'message_stop':
        this.#started(data);
        this.#messageStop();
        break;
      case 'error':
        this.events.push(event as MessageStreamEvent);
        throw this.fail(ApiError.fromStreamError(data, this.snapshot()));
    }
    // ping and unknown types change nothing.
    this.events.push(event as MessageStreamEvent);
    this.emit('event', event as MessageStreamEvent);
    if (data.type === 'message_stop') this.emit('message', this.#message as Message);
  }

  /**
   * Applies one SSE event: its `data` parsed as JSON (ProtocolError with the line when it is not an object).
   * Data without a `type` takes the SSE event name; an event with empty data is skipped.
   */
  pushSse(sse: SseEvent): void {
    if (this.#status === 'completed' || this.#status === 'failed' || sse.data === '') return;
    let data: unknown;
    try {
      data = JSON.parse(sse.data);
    } catch (cause) {
      throw this.fail(new ProtocolError('Stream data is not valid JSON', { line: sse.data, cause }));
    }
    if (!isRecord(data)) throw this.fail(new ProtocolError('Stream data is not a JSON object', { line: sse.data }));
    if (typeof data.type !== 'string') data.type = sse.event;
    this.push(data as { type: string });
  }

  /**
   * The input ended: returns the complete message, or throws StreamIncompleteError (partial: the message so far)
   * when message_stop never came, or the error that already failed the stream.
   */
  end(): Message {
    if (this.#status === 'completed') return this.#message as Message;
    if (this.#error) throw this.#error;
    throw this.fail(new StreamIncompleteError('The stream ended before message_stop'));
  }

  /**
   * Marks the stream failed with `error` (unless it already completed or failed), gives the error the partial
   * message when it has none, emits `error`, and returns the error for the caller to throw.
   */
  fail<E extends Ai4tsError>(error: E): E {
    if (this.#status === 'completed' || this.#status === 'failed') return error;
    if (error.partial === undefined) error.partial = this.snapshot();
    this.#status = 'failed';
    this.#error = error;
    this.emit('error', { type: 'error', error });
    return error;
  }

  /**
   * A copy of the message so far, for an error's `partial`: blocks copied, an unfinished tool_use keeps id and name
   * with `input: {}` and its raw text in `input_error.raw`. Null before message_start.
   */
  snapshot(): Message | null {
    if (!this.#message) return null;
    const content: ContentBlock[] = [];
    for (let i = 0; i < this.#content.length; i++) {
      const block = this.#content[i];
      if (!block) continue;
      const open = this.#open.get(i);
      if (open && isToolBlock(block))
        content.push({ ...block, input: {}, input_error: { message: CUT_OFF, raw: open.json } });
      else content.push(copyBlock(block));
    }
    return { ...this.#message, content, usage: { ...this.#message.usage } };
  }

  #join(type: 'text' | 'thinking'): string {
    let out = '';
    for (const block of this.#content) {
      if (block?.type === type) out += type === 'text' ? (block as TextBlock).text : (block as ThinkingBlock).thinking;
    }
    return out;
  }

  #messageStart(data: Record<string, unknown>): void {
    if (this.#status !== 'pending') throw this.#protocol('A second message_start in one stream', data);
    const message = data.message;
    if (!isRecord(message)) throw this.#protocol('message_start without a message', data);
    // The API opens with empty content; blocks a proxy puts here are kept as finished ones.
    const initial: unknown[] = Array.isArray(message.content) ? message.content : [];
    for (const block of initial) if (isRecord(block)) this.#content.push(copyBlock(block as ContentBlock));
    this.#message = {
      ...(message as Message),
      content: this.#content,
      stop_reason: (message.stop_reason as StopReason | undefined) ?? null,
      stop_sequence: (message.stop_sequence as string | undefined) ?? null,
      usage: { input_tokens: 0, output_tokens: 0, ...(isRecord(message.usage) ? message.usage : {}) },
    };
    this.#status = 'streaming';
    this.#emitUsage();
  }

  #start(data: Record<string, unknown>): void {
    const index = this.#index(data);
    const source = data.content_block;
    if (!isRecord(source) || typeof source.type !== 'string')
      throw this.#protocol('content_block_start without a content_block', data);
    if (this.#content[index] !== undefined)
      throw this.#protocol(`content_block_start for index ${index}, which already started`, data);
    const block = copyBlock(source as ContentBlock);
    this.#content[index] = block;
    const open: OpenBlock = { block, json: '', toolIndex: -1 };
    this.#open.set(index, open);
    if (block.type === 'text') {
      const text = (block as TextBlock).text;
      if (typeof text !== 'string') (block as TextBlock).text = '';
      else if (text) this.#emitText(text);
    } else if (block.type === 'thinking') {
      const thinking = block as ThinkingBlock;
      if (typeof thinking.thinking !== 'string') thinking.thinking = '';
      else if (thinking.thinking) this.#emitThinking(thinking.thinking);
      if (typeof thinking.signature !== 'string') thinking.signature = '';
    } else if (isToolBlock(block)) {
      if (!isRecord(block.input)) block.input = {};
      if (block.type === 'tool_use') {
        open.toolIndex = this.#toolCount++;
        this.emit('tool_call.start', {
          type: 'tool_call.start',
          index: open.toolIndex,
          id: block.id,
          name: block.name,
          choice: 0,
        });
      }
    }
  }

  #delta(data: Record<string, unknown>): void {
    const index = this.#index(data);
    const open = this.#open.get(index);
    if (!open) throw this.#protocol(`content_block_delta for index ${index}, which is not open`, data);
    const delta = data.delta;
    if (!isRecord(delta)) throw this.#protocol('content_block_delta without a delta', data);
    const block = open.block;
    switch (delta.type) {
      case 'text_delta':
        if (this.#expect(block, 'text', data) && typeof delta.text === 'string') {
          (block as TextBlock).text += delta.text;
          this.#emitText(delta.text);
        }
        return;
      case 'input_json_delta':
        if (
          this.#expect(block, isToolBlock(block) ? block.type : 'tool_use', data) &&
          typeof delta.partial_json === 'string'
        ) {
          open.json += delta.partial_json;
          if (open.toolIndex >= 0 && delta.partial_json) {
            const id = (block as ToolUseBlock).id;
            this.emit('tool_call.delta', {
              type: 'tool_call.delta',
              index: open.toolIndex,
              id,
              delta: delta.partial_json,
              choice: 0,
            });
          }
        }
        return;
      case 'thinking_delta':
        if (this.#expect(block, 'thinking', data) && typeof delta.thinking === 'string') {
          (block as ThinkingBlock).thinking += delta.thinking;
          this.#emitThinking(delta.thinking);
        }
        return;
      case 'signature_delta':
        if (this.#expect(block, 'thinking', data) && typeof delta.signature === 'string')
          (block as ThinkingBlock).signature = delta.signature;
        return;
      case 'citations_delta':
        if (this.#expect(block, 'text', data) && isRecord(delta.citation)) {
          const text = block as TextBlock;
          if (Array.isArray(text.citations)) text.citations.push(delta.citation as never);
          else text.citations = [delta.citation as never];
        }
        return;
    }
    // Unknown delta types change nothing.
  }

  #stop(index: number, data: Record<string, unknown>): void {
    const open = this.#open.get(index);
    if (!open) throw this.#protocol(`content_block_stop for index ${index}, which is not open`, data);
    this.#open.delete(index);
    const block = open.block;
    if (!isToolBlock(block)) return;
    const raw = open.json;
    if (raw !== '') {
      let input: unknown;
      try {
        input = JSON.parse(raw);
      } catch (error) {
        block.input = {};
        block.input_error = { message: `Tool input is not valid JSON: ${(error as Error).message}`, raw };
      }
      if (isRecord(input)) block.input = input;
      else if (!block.input_error) {
        block.input = {};
        block.input_error = { message: 'Tool input is not a JSON object', raw };
      }
    }
    if (open.toolIndex >= 0) {
      this.emit('tool_call.done', {
        type: 'tool_call.done',
        index: open.toolIndex,
        id: block.id,
        name: block.name,
        arguments: raw === '' ? JSON.stringify(block.input) : raw,
        choice: 0,
      });
    }
  }

  #messageDelta(data: Record<string, unknown>): void {
    const message = this.#message as Message;
    const delta = data.delta;
    if (isRecord(delta)) {
      if (delta.stop_reason !== undefined) message.stop_reason = delta.stop_reason as StopReason | null;
      if (delta.stop_sequence !== undefined) message.stop_sequence = delta.stop_sequence as string | null;
    }
    if (isRecord(data.usage)) {
      const usage = { ...message.usage };
      for (const key in data.usage) {
        const value = data.usage[key];
        if (value !== null && value !== undefined) usage[key] = value;
      }
      message.usage = usage;
      this.#emitUsage();
    }
  }

  #messageStop(): void {
    // The API always stops every block first; finish any it did not, so tool inputs are still validated.
    for (const index of [...this.#open.keys()]) this.#stop(index, {});
    const message = this.#message as Message;
    if (this.#content.includes(undefined as never)) message.content = this.#content = this.#content.filter(Boolean);
    this.#status = 'completed';
    if (message.stop_reason !== null) {
      this.emit('finish', { type: 'finish', finishReason: toFinishReason(message.stop_reason), choice: 0 });
    }
  }

  #emitText(delta: string): void {
    this.#textSoFar += delta;
    this.emit('content', { type: 'content', delta, snapshot: this.#textSoFar, choice: 0 });
  }

  #emitThinking(delta: string): void {
    this.#thinkingSoFar += delta;
    this.emit('reasoning', { type: 'reasoning', delta, snapshot: this.#thinkingSoFar, choice: 0 });
  }

  #emitUsage(): void {
    const raw = (this.#message as Message).usage;
    this.emit('usage', { type: 'usage', usage: toChatUsage(raw), raw });
  }

  /** Content and message_delta events are only valid between message_start and message_stop. */
  #started(data: Record<string, unknown>): void {
    if (this.#status === 'pending') throw this.#protocol(`${String(data.type)} before message_start`, data);
  }

  #index(data: Record<string, unknown>): number {
    const index = data.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0)
      throw this.#protocol(`${String(data.type)} without a valid index`, data);
    return index;
  }

  /** A known delta must match its block; on a block type ai4ts does not know it is ignored. */
  #expect(block: ContentBlock, type: string, data: Record<string, unknown>): boolean {
    if (block.type === type) return true;
    if (KNOWN_BLOCKS.has(block.type))
      throw this.#protocol(`${(data.delta as { type: string }).type} for a ${block.type} block`, data);
    return false;
  }

  #protocol(message: string, data: Record<string, unknown>): ProtocolError {
    return this.fail(new ProtocolError(message, { line: JSON.stringify(data) }));
  }
}

const KNOWN_BLOCKS = new Set(['text', 'thinking', 'redacted_thinking', 'tool_use', 'server_tool_use']);

function isToolBlock(
  block: ContentBlock,
): block is ToolUseBlock | (Omit<ToolUseBlock, 'type'> & { type: 'server_tool_use' }) {
  return block.type === 'tool_use' || block.type === 'server_tool_use';
}

/** A shallow copy; a text block's citations array is copied too, as it grows in place. */
function copyBlock(block: ContentBlock): ContentBlock {
  const copy = { ...block };
  if (copy.type === 'text' && Array.isArray((copy as TextBlock).citations)) {
    (copy as TextBlock).citations = [...((copy as TextBlock).citations ?? [])];
  }
  return copy;
}
