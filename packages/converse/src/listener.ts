/**
 * Folds the events of one Converse stream (`/converse-stream`) into a `ConverseResponse`, and emits ai4ts's
 * normalized stream events.
 */
import { type NormalizedEvents, ProtocolError, ProtocolListener, type RetryEvents, StreamIncompleteError } from '@ai4ts/core';
import { isRecord, setOwn } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { toChatUsage, toFinishReason } from './convert.js';
import type {
  ContentBlock,
  ContentBlockDelta,
  ContentBlockStart,
  ConverseResponse,
  ConverseStreamOutput,
  StopReason,
  TokenUsage,
} from './types.js';

/**
 * What a {@link ConverseStreamListener} emits: the normalized events (`content`, `reasoning`, `tool_call.*`, `usage`,
 * `finish`, `error`), the raw `event` after it was applied, and the handle's `retry`.
 */
export type ConverseStreamEvents = Omit<NormalizedEvents, 'tool.result'> &
  RetryEvents & {
    /** Every applied stream event. */
    event: (event: ConverseStreamOutput) => void;
  };

/** Options of a {@link ConverseStreamListener}. */
export interface ConverseStreamListenerOptions {
  /** Keep every applied event in {@link ConverseStreamListener.events}. Default true; `collectConverse`'s keeps none. */
  trace?: boolean;
}

/** One content block being built. */
type BlockState =
  | { kind: 'text'; block: { text: string } }
  | { kind: 'reasoning'; block: { reasoningContent: { reasoningText: { text: string; signature?: string } } } }
  | { kind: 'redacted'; block: { reasoningContent: { redactedContent: string } } }
  | { kind: 'tool'; block: { toolUse: { toolUseId: string; name: string; input: unknown } }; input: string; toolIndex: number; done: boolean }
  | { kind: 'other'; block: Record<string, unknown> };

/** What a {@link ConverseStreamListener} knows of one stream; a new one for each attempt (see `reset`). */
interface ConverseState {
  readonly events: ConverseStreamOutput[];
  readonly blocks: Map<number, BlockState>;
  started: boolean;
  stopReason: StopReason | undefined;
  additionalModelResponseFields: unknown;
  metadata: NonNullable<ConverseStreamOutput['metadata']> | undefined;
  toolCount: number;
  text: string;
  reasoning: string;
}

function initialConverseState(): ConverseState {
  return {
    events: [],
    blocks: new Map(),
    started: false,
    stopReason: undefined,
    additionalModelResponseFields: undefined,
    metadata: undefined,
    toolCount: 0,
    text: '',
    reasoning: '',
  };
}

/** The event names of a Converse stream (the frames' `:event-type`). */
const EVENT_NAMES: ReadonlySet<string> = new Set([
  'messageStart',
  'contentBlockStart',
  'contentBlockDelta',
  'contentBlockStop',
  'messageStop',
  'metadata',
]);

const NO_STOP = 'The stream ended before messageStop';

/**
 * The Converse stream state machine, following core's `StreamListener` contract. Feed it each SSE event with
 * {@link pushSse} (the framing gives each event frame as one SSE event named by its `:event-type`, its payload the
 * data), or each event with {@link push} (`{ contentBlockDelta: {...} }`, the AWS SDK's union form).
 *
 * - Text and reasoning blocks open with their first delta; a tool block opens with `contentBlockStart.toolUse`, its
 *   `input` arrives as JSON text in pieces and is parsed only at `contentBlockStop` (empty input is `{}`; text that is
 *   not a JSON object is a ProtocolError). A reasoning block keeps its `signature`; `redactedContent` is its own block.
 * - `messageStop` gives the stop reason (`finish` goes out), `metadata` the usage (`usage` goes out); AWS sends them
 *   in either order. The stream is complete once both came, or when it ends after `messageStop`; a stream that ends
 *   before `messageStop`, or with a tool block not stopped, is a StreamIncompleteError.
 * - Every error's `partial` is {@link snapshot}: the response so far, none before the first event.
 */
export class ConverseStreamListener extends ProtocolListener<ConverseState, ConverseResponse, ConverseStreamEvents> {
  readonly #trace: boolean;

  constructor(options: ConverseStreamListenerOptions = {}) {
    super(initialConverseState);
    this.#trace = options.trace ?? true;
  }

  /** Every applied event, in arrival order (none for a listener created with `trace: false`). */
  get events(): ConverseStreamOutput[] {
    return this.state.events;
  }

  /** The answer text so far. */
  get text(): string {
    return this.state.text;
  }

  /** The reasoning text so far. */
  get reasoning(): string {
    return this.state.reasoning;
  }

  /** The usage, once `metadata` came. */
  get usage(): TokenUsage | null {
    return this.state.metadata?.usage ?? null;
  }

  /**
   * Applies one event. Ignored once the stream completed or failed.
   *
   * @throws ProtocolError for an event that is not a Converse stream event, a delta of another kind than its block,
   *   or a tool input that is not a JSON object; recorded first.
   */
  push(event: ConverseStreamOutput): void {
    if (this.hasEnded()) return;
    const state = this.state;
    if (this.#trace) state.events.push(event);
    const line = (): string => JSON.stringify(event);
    const entries = Object.entries(event);
    const [name, body] = entries[0] ?? [];
    if (entries.length !== 1 || name === undefined || !EVENT_NAMES.has(name) || !isRecord(body)) {
      throw this.fail(new ProtocolError('Not a Converse stream event', { line: line() }));
    }
    state.started = true;
    this.markStreaming();
    switch (name) {
      case 'messageStart':
        break;
      case 'contentBlockStart':
        this.#start(indexOf(body), isRecord(body.start) ? (body.start as ContentBlockStart) : {}, line);
        break;
      case 'contentBlockDelta':
        if (!isRecord(body.delta)) throw this.fail(new ProtocolError('contentBlockDelta without a delta', { line: line() }));
        this.#delta(indexOf(body), body.delta as ContentBlockDelta, line);
        break;
      case 'contentBlockStop':
        this.#stop(indexOf(body), line);
        break;
      case 'messageStop':
        this.#messageStop(body, line);
        break;
      case 'metadata':
        this.#metadata(body);
        break;
    }
    this.emit('event', event);
    if (state.stopReason !== undefined && state.metadata !== undefined) this.complete();
  }

  /**
   * Applies one SSE event: named by the event frame's `:event-type`, its data the payload; an unnamed event's data
   * may also be the union form (`{"messageStart": {...}}`, one recorded line). An event with empty data is skipped.
   *
   * @throws ProtocolError (with the data in `line`) for data that is not a JSON object, and whatever {@link push}
   *   throws; recorded first.
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
    const name = sse.event;
    this.push(name !== undefined && EVENT_NAMES.has(name) ? { [name]: data } : data);
  }

  /** {@link snapshot}: none before the first event. */
  protected override partial(): ConverseResponse | undefined {
    return this.state.started ? this.snapshot() : undefined;
  }

  protected override result(): ConverseResponse {
    return this.snapshot();
  }

  /** Complete after `messageStop` (the usage may not follow) with every tool block stopped. */
  protected override endedEarly(): StreamIncompleteError | undefined {
    if (this.state.stopReason === undefined) return new StreamIncompleteError(NO_STOP);
    for (const block of this.state.blocks.values()) {
      if (block.kind === 'tool' && !block.done) return new StreamIncompleteError('The stream ended inside a toolUse block');
    }
    return undefined;
  }

  /**
   * A copy of the response so far: its blocks in index order (a tool block still streaming holds `{}` as its input:
   * a partial JSON text is not an object yet), `stopReason` empty until it came.
   */
  snapshot(): ConverseResponse {
    const { blocks, stopReason, metadata, additionalModelResponseFields } = this.state;
    const content = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, state]) => copyBlock(state));
    const response: ConverseResponse = { output: { message: { role: 'assistant', content } }, stopReason: stopReason ?? '' };
    if (metadata?.usage) response.usage = { ...metadata.usage };
    if (metadata?.metrics) response.metrics = { ...metadata.metrics };
    if (metadata?.trace !== undefined) response.trace = metadata.trace;
    if (metadata?.performanceConfig !== undefined) response.performanceConfig = metadata.performanceConfig;
    if (additionalModelResponseFields !== undefined) response.additionalModelResponseFields = additionalModelResponseFields;
    return response;
  }

  #start(index: number, start: ContentBlockStart, line: () => string): void {
    if (this.state.blocks.has(index)) throw this.fail(new ProtocolError(`Block ${index} started twice`, { line: line() }));
    const call = start.toolUse;
    if (isRecord(call)) {
      if (typeof call.toolUseId !== 'string' || typeof call.name !== 'string') {
        throw this.fail(new ProtocolError('A toolUse start without toolUseId or name', { line: line() }));
      }
      const toolIndex = this.state.toolCount++;
      this.state.blocks.set(index, {
        kind: 'tool',
        block: { toolUse: { toolUseId: call.toolUseId, name: call.name, input: {} } },
        input: '',
        toolIndex,
        done: false,
      });
      this.emit('tool_call.start', { type: 'tool_call.start', index: toolIndex, id: call.toolUseId, name: call.name, choice: 0 });
      return;
    }
    // A start of another kind (an empty one before text, or one the types do not name): the deltas say what it is.
    if (Object.keys(start).length > 0) this.state.blocks.set(index, { kind: 'other', block: { ...start } });
  }

  #delta(index: number, delta: ContentBlockDelta, line: () => string): void {
    const blocks = this.state.blocks;
    let block = blocks.get(index);
    if (typeof delta.text === 'string') {
      if (!block) {
        block = { kind: 'text', block: { text: '' } };
        blocks.set(index, block);
      }
      if (block.kind !== 'text') throw this.fail(new ProtocolError(`A text delta in a ${block.kind} block`, { line: line() }));
      block.block.text += delta.text;
      this.state.text += delta.text;
      if (delta.text !== '' && this.hears('content')) {
        this.emit('content', { type: 'content', delta: delta.text, snapshot: this.state.text, choice: 0 });
      }
      return;
    }
    if (isRecord(delta.toolUse)) {
      if (block?.kind !== 'tool' || block.done) throw this.fail(new ProtocolError('A toolUse delta outside a toolUse block', { line: line() }));
      const piece = delta.toolUse.input;
      if (typeof piece !== 'string') throw this.fail(new ProtocolError('A toolUse delta without input text', { line: line() }));
      block.input += piece;
      if (piece !== '') {
        const id = block.block.toolUse.toolUseId;
        this.emit('tool_call.delta', { type: 'tool_call.delta', index: block.toolIndex, id, delta: piece, choice: 0 });
      }
      return;
    }
    if (isRecord(delta.reasoningContent)) {
      this.#reasoning(index, block, delta.reasoningContent, line);
      return;
    }
    throw this.fail(new ProtocolError('A contentBlockDelta of an unknown kind', { line: line() }));
  }

  #reasoning(index: number, block: BlockState | undefined, delta: NonNullable<ContentBlockDelta['reasoningContent']>, line: () => string): void {
    if (typeof delta.redactedContent === 'string') {
      // Redacted reasoning is opaque base64: pieces of one block are joined, as the signature's are.
      if (block?.kind === 'redacted') block.block.reasoningContent.redactedContent += delta.redactedContent;
      else if (block) throw this.fail(new ProtocolError(`redactedContent in a ${block.kind} block`, { line: line() }));
      else this.state.blocks.set(index, { kind: 'redacted', block: { reasoningContent: { redactedContent: delta.redactedContent } } });
      return;
    }
    if (!block) {
      block = { kind: 'reasoning', block: { reasoningContent: { reasoningText: { text: '' } } } };
      this.state.blocks.set(index, block);
    }
    if (block.kind !== 'reasoning') throw this.fail(new ProtocolError(`A reasoning delta in a ${block.kind} block`, { line: line() }));
    const reasoning = block.block.reasoningContent.reasoningText;
    if (typeof delta.signature === 'string') reasoning.signature = (reasoning.signature ?? '') + delta.signature;
    if (typeof delta.text === 'string' && delta.text !== '') {
      reasoning.text += delta.text;
      this.state.reasoning += delta.text;
      if (this.hears('reasoning')) {
        this.emit('reasoning', { type: 'reasoning', delta: delta.text, snapshot: this.state.reasoning, choice: 0 });
      }
    }
  }

  /** A tool block is complete: its input is parsed now, and `tool_call.done` goes out. */
  #stop(index: number, line: () => string): void {
    const block = this.state.blocks.get(index);
    if (block?.kind !== 'tool') return;
    if (block.done) throw this.fail(new ProtocolError(`Block ${index} stopped twice`, { line: line() }));
    const text = block.input === '' ? '{}' : block.input;
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch (cause) {
      throw this.fail(new ProtocolError('A toolUse input is not valid JSON', { line: text, cause }));
    }
    if (!isRecord(input)) throw this.fail(new ProtocolError('A toolUse input is not a JSON object', { line: text }));
    block.block.toolUse.input = input;
    block.done = true;
    const { toolUseId: id, name } = block.block.toolUse;
    this.emit('tool_call.done', { type: 'tool_call.done', index: block.toolIndex, id, name, arguments: text, choice: 0 });
  }

  #messageStop(body: Record<string, unknown>, line: () => string): void {
    if (typeof body.stopReason !== 'string') throw this.fail(new ProtocolError('messageStop without a stopReason', { line: line() }));
    this.state.stopReason = body.stopReason;
    if (body.additionalModelResponseFields !== undefined) this.state.additionalModelResponseFields = body.additionalModelResponseFields;
    this.emit('finish', { type: 'finish', finishReason: toFinishReason(body.stopReason), choice: 0 });
  }

  #metadata(body: Record<string, unknown>): void {
    const metadata: NonNullable<ConverseState['metadata']> = {};
    for (const [key, value] of Object.entries(body)) if (value !== undefined) setOwn(metadata, key, value);
    this.state.metadata = metadata;
    if (isRecord(metadata.usage)) {
      this.emit('usage', { type: 'usage', usage: toChatUsage(metadata.usage), raw: metadata.usage });
    }
  }
}

function indexOf(body: Record<string, unknown>): number {
  return typeof body.contentBlockIndex === 'number' ? body.contentBlockIndex : 0;
}

function copyBlock(state: BlockState): ContentBlock {
  switch (state.kind) {
    case 'text':
      return { text: state.block.text };
    case 'reasoning':
      return { reasoningContent: { reasoningText: { ...state.block.reasoningContent.reasoningText } } };
    case 'redacted':
      return { reasoningContent: { ...state.block.reasoningContent } };
    case 'tool':
      return { toolUse: { ...state.block.toolUse } };
    case 'other':
      return { ...state.block };
  }
}
