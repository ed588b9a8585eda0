/**
 * Folds the events of one Anthropic Messages stream into a message, and emits ai4ts's normalized stream events.
 */
import {
  type Ai4tsError,
  ApiError,
  type NormalizedEvents,
  ProtocolError,
  ProtocolListener,
  type RetryEvents,
  StreamIncompleteError,
} from '@ai4ts/core';
import { assertNever, isRecord, setOwn } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { toChatUsage, toFinishReason } from './convert.js';
import { readEvent } from './parse.js';
import {
  type AnyContentBlock,
  type ContentBlockDeltaEvent,
  type ContentBlockStartEvent,
  type ContentBlockStopEvent,
  isKnownBlock,
  isTextBlock,
  isThinkingBlock,
  isToolUseBlock,
  type Message,
  type MessageDeltaEvent,
  type MessageUsage,
  type RawMessageStreamEvent,
  type ServerToolUseBlock,
  type StopReason,
  type TextBlock,
  type ThinkingBlock,
  type ToolUseBlock,
} from './types.js';

/**
 * What a {@link MessagesStreamListener} emits: the normalized events (`content`, `reasoning` for thinking,
 * `tool_call.*` for client tool_use blocks only, `usage` at message_start and message_delta, `finish` at
 * message_stop, `error`), the raw `event` after it was applied, the complete `message` at message_stop, and the
 * handle's `retry`.
 */
export type MessagesStreamEvents = Omit<NormalizedEvents, 'tool.result'> &
  RetryEvents & {
  /** Every applied raw event (unknown event and delta types are skipped, and not emitted). */
  event: (event: RawMessageStreamEvent) => void;
  /** The complete message, at message_stop. */
  message: (message: Message) => void;
};

/** Options of a {@link MessagesStreamListener}. */
export interface MessagesStreamListenerOptions {
  /**
   * Keep every applied event in {@link MessagesStreamListener.events}. Default true; `collectMessage`'s own
   * listener keeps none (nobody could read it), so a long stream collected holds the message and not its events.
   */
  trace?: boolean;
}

/** A block that has started and not yet stopped, by what its deltas may change. */
type OpenBlock =
  | { kind: 'text'; block: TextBlock }
  | { kind: 'thinking'; block: ThinkingBlock }
  | {
      kind: 'tool';
      block: ToolUseBlock | ServerToolUseBlock;
      /** The input text as streamed so far. */
      json: string;
      /** Position among client tool_use blocks; undefined for a server_tool_use block. */
      toolIndex: number | undefined;
    }
  /** A block no delta ai4ts knows applies to (redacted_thinking, a server tool's result, an unknown type). */
  | { kind: 'other'; block: AnyContentBlock };

const CUT_OFF = 'The tool input was cut off before its block finished';
const NO_MESSAGE_STOP = 'The stream ended before message_stop';

/** What a {@link MessagesStreamListener} knows of one stream; a new one for each attempt (see `reset`). */
interface MessageState {
  /** Every applied event, when the listener keeps the trace. */
  readonly events: RawMessageStreamEvent[];
  message: Message | null;
  /** The message's content (the live array), in arrival order until `#ordered` sorts it. */
  content: AnyContentBlock[];
  /** The API index of each block of `content`. */
  indexes: number[];
  /** Every index that started: a start checks it in O(1), whatever the index. */
  readonly started: Set<number>;
  /** A block came after one of a higher index (the API never does that): sort before anyone reads the content. */
  unordered: boolean;
  readonly open: Map<number, OpenBlock>;
  toolCount: number;
  /**
   * The text and thinking blocks in arrival order, message_start's excepted: what the `content` and `reasoning`
   * snapshots join. Kept per block, not per delta, so a collector keeps no second copy of the text.
   */
  readonly textBlocks: TextBlock[];
  readonly thinkingBlocks: ThinkingBlock[];
  /** Running snapshots, kept only while someone listens; stale after deltas nobody heard, rebuilt when one comes. */
  textSoFar: string;
  thinkingSoFar: string;
  textStale: boolean;
  thinkingStale: boolean;
  /** The message, once message_stop completed it. */
  final: Message | undefined;
}

function initialMessageState(): MessageState {
  return {
    events: [],
    message: null,
    content: [],
    indexes: [],
    started: new Set(),
    unordered: false,
    open: new Map(),
    toolCount: 0,
    textBlocks: [],
    thinkingBlocks: [],
    textSoFar: '',
    thinkingSoFar: '',
    textStale: false,
    thinkingStale: false,
    final: undefined,
  };
}

/**
 * The Messages stream state machine, following core's `StreamListener` contract. Feed it each SSE event with
 * {@link pushSse} (or each parsed event with {@link push}); it keeps {@link message}, {@link text},
 * {@link thinking}, {@link toolUses}, {@link stopReason}, {@link usage}, {@link status} and {@link events}, and
 * emits {@link MessagesStreamEvents}.
 *
 * - `status`: `pending` until message_start, `streaming`, `completed` only after message_stop (a `max_tokens` stop
 *   is a completed stream whose finish reason is `length`), `failed` after an error event, bad data, a cut or an
 *   abort. After `completed` or `failed` every input is ignored.
 * - An `error` event is an ApiError (`code` and `type` = `error.type`); a second message_start, an event out of
 *   order or data that is not a Messages event is a ProtocolError. Both are recorded (status `failed`, an `error`
 *   event) and thrown.
 * - Tool inputs are parsed when their block stops; an input that is not a JSON object leaves `input: {}` and sets
 *   `input_error`. Usage starts from message_start's and every non-null counter of message_delta replaces its
 *   value. Unknown block types are kept as sent; unknown delta and event types are skipped.
 * - Every error's `partial` is {@link snapshot}: a copy of the message so far, none before message_start.
 */
export class MessagesStreamListener extends ProtocolListener<MessageState, Message, MessagesStreamEvents> {
  readonly #trace: boolean;

  constructor(options: MessagesStreamListenerOptions = {}) {
    super(initialMessageState);
    this.#trace = options.trace ?? true;
  }

  /** Every applied event, in arrival order (none for a listener created with `trace: false`). */
  get events(): RawMessageStreamEvent[] {
    return this.state.events;
  }

  /** The message being built (the live object), null before message_start. Open tool inputs read `{}`. */
  get message(): Message | null {
    this.#ordered();
    return this.state.message;
  }

  /** The text blocks joined in index order, nothing between. */
  get text(): string {
    return this.#ordered()
      .filter(isTextBlock)
      .map((block) => block.text)
      .join('');
  }

  /** The thinking blocks joined in index order, nothing between. */
  get thinking(): string {
    return this.#ordered()
      .filter(isThinkingBlock)
      .map((block) => block.thinking)
      .join('');
  }

  /** The client tool_use blocks in index order (server_tool_use blocks stay only in `message.content`). */
  get toolUses(): ToolUseBlock[] {
    return this.#ordered().filter(isToolUseBlock);
  }

  /** The stop reason once message_delta gave it. */
  get stopReason(): StopReason | null {
    return this.state.message?.stop_reason ?? null;
  }

  /** Anthropic usage: message_start's, with message_delta's non-null counters replacing it. */
  get usage(): MessageUsage | null {
    return this.state.message?.usage ?? null;
  }

  /**
   * Applies one event. Ignored once the stream completed or failed.
   *
   * @throws ApiError for an `error` event, ProtocolError for an event out of order (a second message_start, content
   * before message_start, a delta for a block that is not open or of another known type); recorded first.
   */
  push(event: RawMessageStreamEvent): void {
    const state = this.state;
    if (this.hasEnded()) return;
    // The token event first: each case compares the (not interned) type string.
    switch (event.type) {
      case 'content_block_delta':
        this.#delta(event);
        break;
      case 'message_start':
        this.#messageStart(event.message, event);
        break;
      case 'content_block_start':
        this.#start(event);
        break;
      case 'content_block_stop':
        this.#current(event);
        this.#stop(this.#openAt(event.index, event));
        break;
      case 'message_delta':
        this.#messageDelta(event);
        break;
      case 'message_stop':
        this.#messageStop(this.#current(event));
        break;
      case 'error':
        if (this.#trace) state.events.push(event);
        throw this.fail(ApiError.fromStreamError(event, undefined));
      case 'ping':
        break;
      default:
        // readEvent passes only the known types: a new one must be decided on here.
        assertNever(event);
    }
    if (this.#trace) state.events.push(event);
    this.emit('event', event);
    if (state.final) this.emit('message', state.final);
  }

  /**
   * Applies one SSE event: its `data` parsed as JSON and read as a Messages event. Data without a `type` takes
   * the SSE event name; an event with empty data, or of a type ai4ts does not know, is skipped.
   *
   * @throws ProtocolError (with the data in `line`) for data that is not a JSON object or not a well-formed
   * event, and whatever {@link push} throws; recorded first.
   */
  override pushSse(sse: SseEvent): void {
    if (this.hasEnded() || sse.data === '') return;
    let data: unknown;
    try {
      data = JSON.parse(sse.data);
    } catch (cause) {
      throw this.fail(new ProtocolError('Stream data is not valid JSON', { line: sse.data, cause }));
    }
    if (!isRecord(data)) throw this.fail(new ProtocolError('Stream data is not a JSON object', { line: sse.data }));
    let event: RawMessageStreamEvent | undefined;
    try {
      event = readEvent(typeof data.type === 'string' ? data : { ...data, type: sse.event });
    } catch (error) {
      throw this.fail(error);
    }
    if (event) this.push(event);
  }

  /** {@link snapshot}: none before message_start. */
  protected override partial(): Message | undefined {
    return this.snapshot() ?? undefined;
  }

  /** The message message_stop completed. */
  protected override result(): Message {
    const final = this.state.final;
    // end() asks only once the stream completed, and only message_stop completes it, setting `final`.
    if (!final) throw new StreamIncompleteError(NO_MESSAGE_STOP);
    return final;
  }

  /** Only message_stop completes a Messages stream. */
  protected override endedEarly(): StreamIncompleteError {
    return new StreamIncompleteError(NO_MESSAGE_STOP);
  }

  /**
   * A copy of the message so far, for an error's `partial`: blocks copied, an unfinished tool_use keeps id and name
   * with `input: {}` and its raw text in `input_error.raw`. Null before message_start.
   */
  snapshot(): Message | null {
    const state = this.state;
    if (!state.message) return null;
    const content = this.#ordered().map((block, i) => {
      const open = state.open.get(state.indexes[i] ?? -1);
      if (open?.kind === 'tool') return { ...open.block, input: {}, input_error: { message: CUT_OFF, raw: open.json } };
      return copyBlock(block);
    });
    return { ...state.message, content, usage: { ...state.message.usage } };
  }

  #messageStart(message: Message, event: RawMessageStreamEvent): void {
    const state = this.state;
    if (this.status !== 'pending') throw this.#protocol('A second message_start in one stream', event);
    // The API opens with empty content; blocks a proxy puts here are kept as finished ones, at indexes 0, 1, ...
    state.content = message.content.map(copyBlock);
    state.indexes = state.content.map((_, i) => i);
    for (const index of state.indexes) state.started.add(index);
    state.message = { ...message, content: state.content, usage: { ...message.usage } };
    this.markStreaming();
    this.#emitUsage(state.message.usage);
  }

  #start(event: ContentBlockStartEvent): void {
    const state = this.state;
    this.#current(event);
    const { index } = event;
    if (state.started.has(index))
      throw this.#protocol(`content_block_start for index ${index}, which already started`, event);
    const block = copyBlock(event.content_block);
    // Indexes come in order; a late lower one still takes its place, sorted in once when read (never a splice
    // per block, which a stream of descending indexes would make quadratic).
    const last = state.indexes[state.indexes.length - 1];
    if (last !== undefined && last > index) state.unordered = true;
    state.started.add(index);
    state.content.push(block);
    state.indexes.push(index);
    const open = openBlock(block);
    state.open.set(index, open);
    if (open.kind === 'text') {
      state.textBlocks.push(open.block);
      if (open.block.text) this.#emitText(open.block.text);
    } else if (open.kind === 'thinking') {
      state.thinkingBlocks.push(open.block);
      if (open.block.thinking) this.#emitThinking(open.block.thinking);
    } else if (open.kind === 'tool' && open.block.type === 'tool_use') {
      open.toolIndex = state.toolCount++;
      const { id, name } = open.block;
      this.emit('tool_call.start', { type: 'tool_call.start', index: open.toolIndex, id, name, choice: 0 });
    }
  }

  #delta(event: ContentBlockDeltaEvent): void {
    this.#current(event);
    const open = this.#openAt(event.index, event);
    const { delta } = event;
    switch (delta.type) {
      case 'text_delta':
        if (open.kind !== 'text') break;
        open.block.text += delta.text;
        this.#emitText(delta.text);
        return;
      case 'citations_delta':
        if (open.kind !== 'text') break;
        if (Array.isArray(open.block.citations)) open.block.citations.push(delta.citation);
        else open.block.citations = [delta.citation];
        return;
      case 'thinking_delta':
        if (open.kind !== 'thinking') break;
        open.block.thinking += delta.thinking;
        this.#emitThinking(delta.thinking);
        return;
      case 'signature_delta':
        if (open.kind !== 'thinking') break;
        open.block.signature = delta.signature;
        return;
      case 'input_json_delta':
        if (open.kind !== 'tool') break;
        open.json += delta.partial_json;
        if (open.toolIndex !== undefined && delta.partial_json && this.hears('tool_call.delta')) {
          this.emit('tool_call.delta', {
            type: 'tool_call.delta',
            index: open.toolIndex,
            id: open.block.id,
            delta: delta.partial_json,
            choice: 0,
          });
        }
        return;
    }
    // The delta does not fit its block: a protocol error on a known block, ignored on an unknown one.
    if (isKnownBlock(open.block)) throw this.#protocol(`${delta.type} for a ${open.block.type} block`, event);
  }

  #stop(open: OpenBlock): void {
    if (open.kind !== 'tool') return;
    const { block, json: raw } = open;
    if (raw !== '') {
      let input: unknown;
      try {
        input = JSON.parse(raw);
      } catch (error) {
        block.input = {};
        block.input_error = { message: `Tool input is not valid JSON: ${describe(error)}`, raw };
      }
      if (isRecord(input)) block.input = input;
      else if (!block.input_error) {
        block.input = {};
        block.input_error = { message: 'Tool input is not a JSON object', raw };
      }
    }
    if (open.toolIndex !== undefined) {
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

  #messageDelta(event: MessageDeltaEvent): void {
    const message = this.#current(event);
    // Every field of the delta is a message field that changed (stop_reason, stop_sequence, container, ...);
    // the content and the usage are the listener's to build. setOwn: a `__proto__` key is a field, not a prototype.
    for (const [key, value] of Object.entries(event.delta))
      if (key !== 'content' && key !== 'usage' && value !== undefined) setOwn(message, key, value);
    if (!event.usage) return;
    const usage: MessageUsage = { ...message.usage };
    for (const [key, value] of Object.entries(event.usage)) {
      if (value !== null && value !== undefined) setOwn(usage, key, value);
    }
    message.usage = usage;
    this.#emitUsage(usage);
  }

  #messageStop(message: Message): void {
    this.#ordered();
    // The API always stops every block first; finish any it did not, so tool inputs are still validated.
    for (const [index, open] of this.state.open) {
      this.state.open.delete(index);
      this.#stop(open);
    }
    this.complete();
    this.state.final = message;
    if (message.stop_reason !== null) {
      this.emit('finish', { type: 'finish', finishReason: toFinishReason(message.stop_reason), choice: 0 });
    }
  }

  // Each event object and snapshot is built only for someone listening: a collector pays nothing per delta. The
  // block already holds `delta` when these run, so a stale snapshot rebuilt from the blocks includes it.
  #emitText(delta: string): void {
    const state = this.state;
    if (!this.hears('content')) {
      state.textStale = true;
      return;
    }
    if (state.textStale) {
      state.textStale = false;
      state.textSoFar = state.textBlocks.map((block) => block.text).join('');
    } else state.textSoFar += delta;
    this.emit('content', { type: 'content', delta, snapshot: state.textSoFar, choice: 0 });
  }

  #emitThinking(delta: string): void {
    const state = this.state;
    if (!this.hears('reasoning')) {
      state.thinkingStale = true;
      return;
    }
    if (state.thinkingStale) {
      state.thinkingStale = false;
      state.thinkingSoFar = state.thinkingBlocks.map((block) => block.thinking).join('');
    } else state.thinkingSoFar += delta;
    this.emit('reasoning', { type: 'reasoning', delta, snapshot: state.thinkingSoFar, choice: 0 });
  }

  #emitUsage(raw: MessageUsage): void {
    this.emit('usage', { type: 'usage', usage: toChatUsage(raw), raw });
  }

  /** The content in index order, sorted in place (the live array) after a late lower index. */
  #ordered(): AnyContentBlock[] {
    const state = this.state;
    if (state.unordered) {
      const pairs = state.content.map((block, i) => ({ block, index: state.indexes[i] ?? 0 }));
      pairs.sort((a, b) => a.index - b.index);
      pairs.forEach(({ block, index }, i) => {
        state.content[i] = block;
        state.indexes[i] = index;
      });
      state.unordered = false;
    }
    return state.content;
  }

  /** The message being built: content and message_delta events are valid only after message_start. */
  #current(event: RawMessageStreamEvent): Message {
    const state = this.state;
    if (!state.message) throw this.#protocol(`${event.type} before message_start`, event);
    return state.message;
  }

  /** The open block at `index`; a stop takes it out of the open ones. */
  #openAt(index: number, event: ContentBlockDeltaEvent | ContentBlockStopEvent): OpenBlock {
    const open = this.state.open.get(index);
    if (!open) throw this.#protocol(`${event.type} for index ${index}, which is not open`, event);
    if (event.type === 'content_block_stop') this.state.open.delete(index);
    return open;
  }

  #protocol(message: string, event: RawMessageStreamEvent): Ai4tsError {
    return this.fail(new ProtocolError(message, { line: JSON.stringify(event) }));
  }
}

/** What the deltas of a block may change. */
function openBlock(block: AnyContentBlock): OpenBlock {
  if (!isKnownBlock(block)) return { kind: 'other', block };
  switch (block.type) {
    case 'text':
      return { kind: 'text', block };
    case 'thinking':
      return { kind: 'thinking', block };
    case 'tool_use':
    case 'server_tool_use':
      return { kind: 'tool', block, json: '', toolIndex: undefined };
    default:
      return { kind: 'other', block };
  }
}

/** A shallow copy; a text block's citations array is copied too, as it grows in place. */
function copyBlock(block: AnyContentBlock): AnyContentBlock {
  if (isTextBlock(block) && Array.isArray(block.citations)) return { ...block, citations: [...block.citations] };
  return { ...block };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
