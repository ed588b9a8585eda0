/**
 * The Responses stream state machine: parsed events in, a rebuilt response object and normalized events out.
 *
 * Items are tracked by `output_index`, never by `item_id` (some gateways change ids between events). Deltas build
 * each item; `.done` events and the terminal response replace what the deltas built, but never erase it.
 */
import {
  ApiError,
  type NormalizedEvents,
  ProtocolError,
  ProtocolListener,
  type RetryEvents,
  type StreamEvent,
  StreamIncompleteError,
} from '@ai4ts/core';
import { getOwn, isRecord } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { toChatUsage, toFinishReason } from './convert.js';
import { builtInStep, isKnownEvent } from './event-types.js';
import {
  copyRecord,
  doneText,
  emptyReasoningText,
  emptySummary,
  emptyTextPart,
  isIndex,
  isMessagePart,
  isOutputItem,
  isReasoningTextPart,
  isSlot,
  isSummaryPart,
  type Json,
  mergeRecord,
  outputTextOf,
  type PlaceholderType,
  placeholder,
  setPart,
  shownText,
} from './merge.js';
import type {
  BuiltInToolCallEvent,
  ContentPartEvent,
  FunctionCallItem,
  OutputItem,
  OutputItemEvent,
  OutputTextAnnotationAddedEvent,
  ReasoningSummaryPartEvent,
  ResponseLifecycleEvent,
  ResponseObject,
  ResponseSnapshot,
  ResponseStreamEvent,
} from './types.js';

/** Something odd that did not stop the stream: a `sequence_number` gap or regression, or a malformed event. */
export interface ResponsesStreamWarning {
  type: 'warning';
  code: 'sequence_gap' | 'sequence_regression' | 'malformed_event';
  message: string;
  event: unknown;
}

/**
 * The events a {@link ResponsesStreamListener} emits: the normalized ones and `error`, plus the Responses extras and
 * the handle's `retry`.
 */
export interface ResponsesStreamEvents extends Pick<NormalizedEvents, StreamEvent['type'] | 'error'>, RetryEvents {
  /** Every event of a known type, as received (before the normalized events it causes). */
  event: (event: ResponseStreamEvent) => void;
  /** An event of a type this version does not know (kept in `events` as well). */
  unknown: (event: unknown) => void;
  warning: (warning: ResponsesStreamWarning) => void;
}

/** Where an event points: the item by `output_index` (or `item_id`). */
interface ItemAddress {
  output_index?: unknown;
  item_id?: unknown;
}

/** Where a text event points: its item, and the part within it. */
interface TextAddress extends ItemAddress {
  content_index?: unknown;
  summary_index?: unknown;
}

/**
 * The string fields that deltas build and `.done` events settle, one kind per event family: message text and
 * refusals, reasoning summary and raw reasoning text, function arguments, custom tool input, and the code and
 * MCP arguments of built-in tools.
 */
type TextKind = 'output_text' | 'refusal' | 'summary' | 'reasoning_text' | 'arguments' | 'input' | 'code' | 'mcp_arguments';

/** Where one text kind lives: the object holding the string, its field, and the item (and its index) it belongs to. */
interface TextSlot {
  holder: Json;
  field: string;
  item: OutputItem;
  index: number;
}

/** Options of a {@link ResponsesStreamListener}. */
export interface ResponsesStreamListenerOptions {
  /**
   * Keep every value pushed in {@link ResponsesStreamListener.events}, the trace a stream is resumed or replayed
   * from. Default true; `collectResponse`'s own listener keeps none (nobody could read it), so a long stream
   * collected holds the response and not its events too.
   */
  trace?: boolean;
}

/** Bookkeeping of one function call: its position among the calls, and whether `tool_call.done` went out. */
interface CallState {
  index: number;
  done: boolean;
}

/** What a {@link ResponsesStreamListener} knows of one stream; a new one for each attempt (see `reset`). */
interface ResponseState {
  /** Every value pushed, when the listener keeps the trace. */
  readonly events: unknown[];
  /** Values pushed, and the last one: kept without the trace too. */
  pushed: number;
  last: unknown;
  /** The latest lifecycle snapshot; its `output` is unused (the items below are the output). */
  base: ResponseSnapshot;
  /** Items by `output_index` (a map, so an absurd index from a broken gateway costs nothing). */
  readonly items: Map<number, OutputItem>;
  /**
   * The items in index order, kept as they come: an item at a higher index is appended, a replaced one changes in
   * place (`positions`), and only a late lower index makes the next read sort (never a sort or walk per event).
   */
  ordered: OutputItem[];
  readonly positions: Map<number, number>;
  unordered: boolean;
  /** The highest index so far (0 when none): where an event without `output_index` or a known `item_id` goes. */
  lastIndex: number;
  /** The index of the first item holding each `item_id`, checked on use (an item may change its id). */
  readonly byId: Map<string, number>;
  /**
   * The running snapshot is behind the items: a `.done` event corrected built text, or deltas came while nobody
   * listened (no snapshot is kept then). Rebuilt from the items when a listener next needs it, not per event.
   */
  textStale: boolean;
  summaryStale: boolean;
  reasoningStale: boolean;
  readonly calls: Map<number, CallState>;
  /**
   * The slot the last delta went to, for the next delta of the same run: no lookup and no new slot per token. It
   * holds while `layout` is unchanged (an item or a part replaced) and the delta points at the same place.
   */
  deltaSlot: TextSlot | undefined;
  deltaKind: TextKind | undefined;
  deltaOutput: unknown;
  deltaPart: unknown;
  deltaLayout: number;
  /** Counts the replacements of items and parts: a slot found before one may point at what is no longer there. */
  layout: number;
  lastSequence: number | undefined;
  /**
   * Running snapshots for the `content` and `reasoning` events, kept only while someone listens (stale otherwise,
   * and after a `.done` event corrected them: rebuilt from the items).
   */
  text: string;
  summary: string;
  /** The summary part the last summary delta went to (a new one is set apart by a blank line). */
  summaryItem: number;
  summaryIndex: number;
  reasoningText: string;
}

function initialResponseState(): ResponseState {
  return {
    events: [],
    pushed: 0,
    last: undefined,
    base: { id: '', object: 'response', model: '', status: 'in_progress', output: [] },
    items: new Map(),
    ordered: [],
    positions: new Map(),
    unordered: false,
    lastIndex: 0,
    byId: new Map(),
    textStale: false,
    summaryStale: false,
    reasoningStale: false,
    calls: new Map(),
    deltaSlot: undefined,
    deltaKind: undefined,
    deltaOutput: undefined,
    deltaPart: undefined,
    deltaLayout: 0,
    layout: 0,
    lastSequence: undefined,
    text: '',
    summary: '',
    summaryItem: -1,
    summaryIndex: -1,
    reasoningText: '',
  };
}

/**
 * Rebuilds a Responses API stream from its events, following the listener contract of every ai4ts protocol.
 *
 * - `status`: `pending`, `streaming`, then `completed` at `response.completed` or `response.incomplete` (a
 *   truncation such as `max_output_tokens` is a completed stream whose `finish` reason is `length`; the response's
 *   own `status` stays `incomplete`), or `failed` at `response.failed`, an `error` event, data that is not JSON,
 *   a cut or an abort.
 * - {@link pushSse} parses one SSE event and calls {@link push}; `push` merges one parsed event. At
 *   `response.failed` or an `error` event they record an `ApiError` (status `failed`, an `error` event) and throw
 *   it; `pushSse` does the same with a `ProtocolError` for data that is not JSON. After `completed` or `failed`
 *   input only joins the trace ({@link events}). Oddities that are not failures (a `sequence_number` gap, a
 *   malformed event, an unknown event type) are `warning` / `unknown` events and never throw.
 * - {@link end} returns the final response, or throws: the recorded error, or a `StreamIncompleteError` when no
 *   terminal event came.
 * - {@link fail} records an outside failure (the network, an abort) and returns it to throw.
 *
 * Every error's `partial` is the response rebuilt so far (function calls keep their partial arguments); a failure
 * before anything was pushed (an HTTP error) has none.
 *
 * @example
 * const listener = new ResponsesStreamListener().on('content', (e) => process.stdout.write(e.delta));
 * for (const event of events) listener.push(event);
 * const response = listener.end(); // throws the typed error of a failed or cut stream
 */
export class ResponsesStreamListener extends ProtocolListener<ResponseState, ResponseObject, ResponsesStreamEvents> {
  readonly #trace: boolean;

  constructor(options: ResponsesStreamListenerOptions = {}) {
    super(initialResponseState);
    this.#trace = options.trace ?? true;
  }

  /**
   * Every value pushed, in order, including unknown events and those after the terminal one: the trace to replay.
   * Always empty for a listener created with `trace: false`.
   */
  get events(): readonly unknown[] {
    return this.state.events;
  }

  /** The last value pushed. */
  get lastEvent(): unknown {
    return this.state.last;
  }

  /** The `sequence_number` of the last numbered event before the terminal one (where a resumed stream goes on). */
  get lastSequenceNumber(): number | undefined {
    return this.state.lastSequence;
  }

  /** The response as rebuilt so far: the latest lifecycle snapshot with the output items in `output_index` order. */
  get response(): ResponseObject {
    // A copy: the list grows in place as items arrive, and a response read earlier must not change.
    const output = [...this.#output()];
    return { ...this.state.base, output, output_text: outputTextOf(output) };
  }

  /** All answer text so far: every `output_text` part of every message, in order. */
  get outputText(): string {
    return outputTextOf(this.#output());
  }

  /** Every reasoning summary part of every reasoning item, joined with a blank line. */
  get reasoningSummary(): string {
    const parts: string[] = [];
    for (const item of this.#output()) {
      if (item.type === 'reasoning') for (const part of item.summary) parts.push(part.text);
    }
    return parts.join('\n\n');
  }

  /** The function calls so far, by `call_id`; each keeps its own argument string (partial until its `.done`). */
  get functionCalls(): Record<string, FunctionCallItem> {
    const calls: Record<string, FunctionCallItem> = {};
    for (const item of this.#output()) if (item.type === 'function_call') calls[item.call_id] = item;
    return calls;
  }

  /**
   * Feeds one SSE event: its data parsed as JSON and {@link push}ed. Throws a `ProtocolError` (recorded, with the
   * partial response) for data that is not JSON, and whatever `push` throws. Blank data is skipped; a gateway's
   * `[DONE]` and anything after the terminal event only join the trace.
   */
  override pushSse(sse: SseEvent): void {
    const data = sse.data;
    // Blank data is skipped; an event object (`{`, every event on the hot path) cannot be blank, so no `trim()`.
    if (data.charCodeAt(0) !== 123 && data.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (cause) {
      if (data === '[DONE]' || this.hasEnded()) {
        this.push(data);
        return;
      }
      throw this.record(
        new ProtocolError('The Responses stream sent data that is not JSON', { cause, line: data, partial: this.response }),
      );
    }
    this.push(parsed);
  }

  /**
   * Takes one parsed event (its `type` drives the state machine). Throws the recorded `ApiError` at
   * `response.failed` or an `error` event; see the class comment for what never throws.
   */
  push(data: unknown): void {
    const state = this.state;
    state.pushed++;
    state.last = data;
    if (this.#trace) state.events.push(data);
    if (this.hasEnded()) return;
    this.markStreaming();
    if (!isKnownEvent(data)) {
      this.emit('unknown', data);
      return;
    }
    if (typeof data.sequence_number === 'number') this.#checkSequence(data.sequence_number, data);
    this.emit('event', data);
    if (!this.#apply(data)) this.#warn('malformed_event', `Ignored a malformed ${data.type} event`, data);
  }

  /** The response so far: function calls keep their partial arguments. */
  protected override partial(): ResponseObject {
    return this.response;
  }

  protected override result(): ResponseObject {
    return this.response;
  }

  /** No terminal event came: the stream is cut. */
  protected override endedEarly(): StreamIncompleteError<ResponseObject> {
    return new StreamIncompleteError<ResponseObject>(
      'The Responses stream ended without a terminal event (response.completed, response.incomplete or response.failed)',
    );
  }

  /** Applies a known event; false when its payload is malformed (a warning, then skipped). */
  #apply(event: ResponseStreamEvent): boolean {
    // The token events first: each case is a string comparison.
    switch (event.type) {
      case 'response.output_text.delta':
        return this.#textEvent('output_text', event, event.delta, false);
      case 'response.reasoning_summary_text.delta':
        return this.#textEvent('summary', event, event.delta, false);
      case 'response.reasoning_text.delta':
        return this.#textEvent('reasoning_text', event, event.delta, false);
      case 'response.function_call_arguments.delta':
        return this.#textEvent('arguments', event, event.delta, false);
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        if (!isRecord(event.response)) return false;
        this.#adopt(event.response, false);
        return true;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        if (!isRecord(event.response)) return false;
        this.#terminal(event);
        return true;
      case 'error':
        // The flat shape's own `type` is the event type ('error'), not an error type. A first event that is an
        // error has no partial, as in every protocol: nothing arrived (and the stream may be retried).
        throw this.record(
          ApiError.fromStreamError(
            isRecord(event.error) ? event : { ...event, type: undefined },
            this.state.pushed === 1 ? undefined : this.response,
          ),
        );
      case 'response.output_item.added':
      case 'response.output_item.done':
        return this.#outputItem(event);
      case 'response.content_part.added':
      case 'response.content_part.done':
        return this.#contentPart(event);
      case 'response.reasoning_summary_part.added':
      case 'response.reasoning_summary_part.done':
        return this.#summaryPart(event);
      case 'response.output_text.annotation.added':
        return this.#annotation(event);
      case 'response.output_text.done':
        return this.#textEvent('output_text', event, event.text, true);
      case 'response.refusal.delta':
        return this.#textEvent('refusal', event, event.delta, false);
      case 'response.refusal.done':
        return this.#textEvent('refusal', event, event.refusal, true);
      case 'response.reasoning_summary_text.done':
        return this.#textEvent('summary', event, event.text, true);
      case 'response.reasoning_text.done':
        return this.#textEvent('reasoning_text', event, event.text, true);
      case 'response.function_call_arguments.done':
        return this.#textEvent('arguments', event, event.arguments, true);
      case 'response.custom_tool_call_input.delta':
        return this.#textEvent('input', event, event.delta, false);
      case 'response.custom_tool_call_input.done':
        return this.#textEvent('input', event, event.input, true);
      default:
        return this.#builtIn(event);
    }
  }

  // --- lifecycle -------------------------------------------------------------------------------------------

  /**
   * Takes a lifecycle snapshot. Its fields replace ours; its `output` replaces the built items only when it is
   * authoritative (terminal) and no shorter than what was built, or when nothing was built yet.
   */
  #adopt(snapshot: ResponseSnapshot, terminal: boolean): void {
    const { output, output_text: _derived, ...fields } = snapshot;
    this.state.base = { ...this.state.base, ...fields };
    if (!Array.isArray(output)) return;
    const built = this.state.items.size;
    if (built === 0 || (terminal && output.length >= built)) {
      this.#clearItems();
      output.forEach((item, index) => {
        const copy = isRecord(item) ? copyRecord(item) : undefined;
        if (copy && isOutputItem(copy)) this.#setItem(index, copy);
      });
    }
  }

  #terminal(event: ResponseLifecycleEvent): void {
    this.#adopt(event.response, true);
    this.#emitUsage();
    if (event.type === 'response.failed') throw this.record(ApiError.fromStreamError(event.response, this.response));
    const completed = event.type === 'response.completed';
    // A truncated turn's calls may hold partial arguments: only a completed one finishes them.
    if (completed) this.#finishPendingCalls();
    this.complete();
    const finishReason = toFinishReason({
      output: this.#output(),
      incomplete_details: this.state.base.incomplete_details,
      status: completed ? 'completed' : 'incomplete',
    });
    this.emit('finish', { type: 'finish', finishReason, choice: 0 });
  }

  #emitUsage(): void {
    const raw = this.state.base.usage;
    if (isRecord(raw) && typeof raw.input_tokens === 'number') {
      this.emit('usage', { type: 'usage', usage: toChatUsage(raw), raw });
    }
  }

  #checkSequence(sequence: number, event: unknown): void {
    const last = this.state.lastSequence;
    if (last !== undefined && sequence !== last + 1) {
      const regression = sequence <= last;
      this.#warn(
        regression ? 'sequence_regression' : 'sequence_gap',
        `sequence_number ${sequence} after ${last}${regression ? '' : ` (${sequence - last - 1} missing)`}`,
        event,
      );
    }
    this.state.lastSequence = last === undefined ? sequence : Math.max(last, sequence);
  }

  #warn(code: ResponsesStreamWarning['code'], message: string, event: unknown): void {
    this.emit('warning', { type: 'warning', code, message, event });
  }

  // --- output items ----------------------------------------------------------------------------------------

  /** The items in `output_index` order (an index the stream skipped leaves no hole). */
  #output(): OutputItem[] {
    if (this.state.unordered) {
      const entries = [...this.state.items].sort((a, b) => a[0] - b[0]);
      this.state.ordered = entries.map(([, item]) => item);
      this.state.positions.clear();
      entries.forEach(([index], position) => {
        this.state.positions.set(index, position);
      });
      this.state.unordered = false;
    }
    return this.state.ordered;
  }

  #setItem(index: number, item: OutputItem): void {
    this.state.layout++;
    const replaced = this.state.items.has(index);
    this.state.items.set(index, item);
    if (typeof item.id === 'string') {
      const holder = this.state.byId.get(item.id);
      if (holder === undefined || this.state.items.get(holder)?.id !== item.id) this.state.byId.set(item.id, index);
    }
    if (this.state.unordered) return;
    const position = this.state.positions.get(index);
    if (replaced && position !== undefined) this.state.ordered[position] = item;
    else if (this.state.ordered.length === 0 || index > this.state.lastIndex) {
      this.state.positions.set(index, this.state.ordered.length);
      this.state.ordered.push(item);
    } else this.state.unordered = true;
    this.state.lastIndex = Math.max(this.state.lastIndex, index);
  }

  #clearItems(): void {
    this.state.layout++;
    this.state.items.clear();
    this.state.ordered = [];
    this.state.positions.clear();
    this.state.unordered = false;
    this.state.lastIndex = 0;
    this.state.byId.clear();
  }

  /**
   * The index an event refers to: its `output_index`, else the item with its `item_id`, else the last item.
   * Undefined for an index that is not a non-negative integer.
   */
  #indexOf(at: ItemAddress): number | undefined {
    const index = at.output_index;
    if (index !== undefined) return isIndex(index) ? index : undefined;
    const id = at.item_id;
    const found = typeof id === 'string' ? this.state.byId.get(id) : undefined;
    return found !== undefined && this.state.items.get(found)?.id === id ? found : this.state.lastIndex;
  }

  /** The item at `index`, created as `type` when the stream skipped its `output_item.added` (so nothing is lost). */
  #itemAt(index: number, type: PlaceholderType, at: ItemAddress): OutputItem {
    let item = this.state.items.get(index);
    if (!item) {
      item = placeholder(type, typeof at.item_id === 'string' ? at.item_id : '');
      this.#setItem(index, item);
      if (item.type === 'function_call') this.#startCall(index, item);
    }
    return item;
  }

  #outputItem(event: OutputItemEvent): boolean {
    if (!isRecord(event.item)) return false;
    const index = this.#indexOf(event);
    if (index === undefined) return false;
    const built = this.state.items.get(index);
    const item = built ? mergeRecord(built, event.item) : copyRecord(event.item);
    if (!isOutputItem(item)) return false;
    this.#setItem(index, item);
    if (built) this.#resyncIfChanged(built, item);
    if (item.type !== 'function_call') return true;
    if (!this.state.calls.has(index)) this.#startCall(index, item);
    if (event.type === 'response.output_item.done' && item.status !== 'incomplete') this.#finishCall(index, item);
    return true;
  }

  /** `content_part.added` / `.done`: a message part, or a raw reasoning text part of a reasoning item. */
  #contentPart(event: ContentPartEvent): boolean {
    const at = event.content_index;
    if (!isRecord(event.part) || !isIndex(at)) return false;
    const index = this.#indexOf(event);
    if (index === undefined) return false;
    const item = this.#itemAt(index, event.part.type === 'reasoning_text' ? 'reasoning' : 'message', event);
    let built: Json | undefined;
    let part: Json;
    if (item.type === 'message' && isSlot(item.content, at)) {
      built = item.content[at];
      part = built ? mergeRecord(built, event.part) : copyRecord(event.part);
      if (!isMessagePart(part)) return false;
      setPart(item.content, at, part, emptyTextPart);
      this.state.layout++;
    } else if (item.type === 'reasoning' && isSlot(item.content ?? [], at)) {
      item.content ??= [];
      built = item.content[at];
      part = built ? mergeRecord(built, event.part) : copyRecord(event.part);
      if (!isReasoningTextPart(part)) return false;
      setPart(item.content, at, part, emptyReasoningText);
      this.state.layout++;
    } else return false;
    if (built) this.#resyncIfChanged(built, part);
    return true;
  }

  #summaryPart(event: ReasoningSummaryPartEvent): boolean {
    const at = event.summary_index;
    const index = this.#indexOf(event);
    if (!isRecord(event.part) || !isIndex(at) || index === undefined) return false;
    const item = this.#itemAt(index, 'reasoning', event);
    if (item.type !== 'reasoning' || !isSlot(item.summary, at)) return false;
    const built = item.summary[at];
    const part = built ? mergeRecord(built, event.part) : copyRecord(event.part);
    if (!isSummaryPart(part)) return false;
    setPart(item.summary, at, part, emptySummary);
    this.state.layout++;
    if (built) this.#resyncIfChanged(built, part);
    return true;
  }

  /** An annotation joins its `output_text` part (created when the stream skipped it). */
  #annotation(event: OutputTextAnnotationAddedEvent): boolean {
    const annotation = event.annotation;
    if (!isRecord(annotation)) return false;
    const part = this.#slot('output_text', event)?.holder;
    if (!part || !Array.isArray(part.annotations)) return false;
    const at = event.annotation_index ?? part.annotations.length;
    if (!isIndex(at) || !isSlot(part.annotations, at)) return false;
    // Past the end it is appended: an annotation has no empty form to fill a skipped one with, and a hole is none.
    part.annotations[Math.min(at, part.annotations.length)] = { ...annotation };
    return true;
  }

  // --- text slots --------------------------------------------------------------------------------------------

  /**
   * One handler for every delta / done pair: a delta appends to its slot and emits the normalized event of its
   * kind; a `.done` value settles the slot (never erasing it) and, for function arguments, finishes the call.
   */
  #textEvent(kind: TextKind, event: TextAddress, value: unknown, done: boolean): boolean {
    if (typeof value !== 'string') return false;
    const slot = done ? this.#slot(kind, event) : this.#deltaSlotOf(kind, event);
    if (!slot) return false;
    const { holder, field, item } = slot;
    const built = typeof holder[field] === 'string' ? holder[field] : '';
    if (done) {
      const text = doneText(built, value);
      holder[field] = text;
      if (kind === 'output_text' || kind === 'summary' || kind === 'reasoning_text') this.#corrected(kind, built, text);
      if (item.type === 'function_call') {
        const name = isRecord(event) ? getOwn(event, 'name') : undefined;
        if (!item.name && typeof name === 'string') item.name = name;
        this.#finishCall(slot.index, item);
      }
      return true;
    }
    holder[field] = built + value;
    this.#streamed(kind, slot, event, value);
    return true;
  }

  /** {@link #slot} for a delta: the last delta's slot when this one points at the same place and nothing moved. */
  #deltaSlotOf(kind: TextKind, event: TextAddress): TextSlot | undefined {
    const output = event.output_index;
    const part = kind === 'summary' ? event.summary_index : event.content_index;
    const state = this.state;
    if (
      state.deltaSlot !== undefined &&
      state.deltaLayout === state.layout &&
      state.deltaKind === kind &&
      state.deltaOutput === output &&
      state.deltaPart === part
    )
      return state.deltaSlot;
    const slot = this.#slot(kind, event);
    // Only an event with its output_index is cached: one addressed by item_id may go elsewhere with the same fields.
    state.deltaSlot = typeof output === 'number' ? slot : undefined;
    state.deltaKind = kind;
    state.deltaOutput = output;
    state.deltaPart = part;
    state.deltaLayout = state.layout;
    return slot;
  }

  /** Emits the normalized event of a delta. Objects are only built when someone listens (the hot path). */
  #streamed(kind: TextKind, slot: TextSlot, event: TextAddress, delta: string): void {
    const state = this.state;
    switch (kind) {
      case 'output_text':
        // Nobody listens: no snapshot is kept (a second copy of the text), it is rebuilt if someone comes.
        if (!this.hears('content')) {
          state.textStale = true;
          return;
        }
        if (state.textStale) {
          state.textStale = false;
          state.text = this.outputText; // the items already hold this delta
        } else state.text += delta;
        this.emit('content', { type: 'content', delta, snapshot: state.text, choice: 0 });
        return;
      case 'summary': {
        const part = typeof event.summary_index === 'number' ? event.summary_index : -1;
        const newPart = slot.index !== state.summaryItem || part !== state.summaryIndex;
        state.summaryItem = slot.index;
        state.summaryIndex = part;
        if (!this.hears('reasoning')) {
          state.summaryStale = true;
          return;
        }
        if (state.summaryStale) {
          state.summaryStale = false;
          state.summary = this.reasoningSummary;
        } else {
          if (newPart && state.summary !== '') state.summary += '\n\n';
          state.summary += delta;
        }
        this.emit('reasoning', { type: 'reasoning', delta, snapshot: state.summary, choice: 0 });
        return;
      }
      case 'reasoning_text':
        if (!this.hears('reasoning')) {
          state.reasoningStale = true;
          return;
        }
        if (state.reasoningStale) {
          state.reasoningStale = false;
          state.reasoningText = this.#rawReasoning();
        } else state.reasoningText += delta;
        this.emit('reasoning', { type: 'reasoning', delta, snapshot: state.reasoningText, choice: 0 });
        return;
      case 'arguments': {
        if (!this.hears('tool_call.delta')) return;
        const call = state.calls.get(slot.index);
        if (call && slot.item.type === 'function_call') {
          const id = slot.item.call_id;
          this.emit('tool_call.delta', { type: 'tool_call.delta', index: call.index, id, delta, choice: 0 });
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * Where a text kind lives for an event: the part, summary part or item, created when the stream skipped its
   * `.added` events (built-in tool fields excepted: their item must exist). Undefined for a bad index or a slot
   * holding something of another type.
   */
  #slot(kind: TextKind, event: TextAddress): (TextSlot) | undefined {
    const index = this.#indexOf(event);
    if (index === undefined) return undefined;
    switch (kind) {
      case 'output_text':
      case 'refusal': {
        const at = event.content_index;
        const item = isIndex(at) ? this.#itemAt(index, 'message', event) : undefined;
        if (!isIndex(at) || item?.type !== 'message' || !isSlot(item.content, at)) return undefined;
        const part =
          item.content[at] ??
          setPart(item.content, at, kind === 'output_text' ? emptyTextPart() : { type: kind, refusal: '' }, emptyTextPart);
        if (part.type !== kind) return undefined;
        return { holder: part, field: kind === 'output_text' ? 'text' : 'refusal', item, index };
      }
      case 'summary':
      case 'reasoning_text': {
        const at = kind === 'summary' ? event.summary_index : event.content_index;
        const item = isIndex(at) ? this.#itemAt(index, 'reasoning', event) : undefined;
        if (!isIndex(at) || item?.type !== 'reasoning') return undefined;
        if (kind === 'summary') {
          if (!isSlot(item.summary, at)) return undefined;
          const part = item.summary[at] ?? setPart(item.summary, at, emptySummary(), emptySummary);
          return { holder: part, field: 'text', item, index };
        }
        item.content ??= [];
        if (!isSlot(item.content, at)) return undefined;
        const part = item.content[at] ?? setPart(item.content, at, emptyReasoningText(), emptyReasoningText);
        return { holder: part, field: 'text', item, index };
      }
      case 'arguments':
      case 'input': {
        const item = this.#itemAt(index, kind === 'arguments' ? 'function_call' : 'custom_tool_call', event);
        const expected = kind === 'arguments' ? 'function_call' : 'custom_tool_call';
        return item.type === expected ? { holder: item, field: kind, item, index } : undefined;
      }
      case 'code':
      case 'mcp_arguments': {
        const item = this.state.items.get(index);
        return item && { holder: item, field: kind === 'code' ? 'code' : 'arguments', item, index };
      }
    }
  }

  /** Built-in tool progress: the suffix is the item's new status; code and MCP argument deltas build their field. */
  #builtIn(event: BuiltInToolCallEvent): boolean {
    const read = builtInStep(event.type);
    const index = this.#indexOf(event);
    const item = read && index !== undefined ? this.state.items.get(index) : undefined;
    if (!read || !item) return false;
    if (read.field === undefined) {
      if (read.step !== 'partial_image') item.status = read.step;
      return true;
    }
    const done = read.step === 'done';
    return this.#textEvent(read.field === 'code' ? 'code' : 'mcp_arguments', event, done ? event[read.field] : event.delta, done);
  }

  // --- function calls ------------------------------------------------------------------------------------------

  #startCall(index: number, item: FunctionCallItem): void {
    const call = { index: this.state.calls.size, done: false };
    this.state.calls.set(index, call);
    this.emit('tool_call.start', {
      type: 'tool_call.start',
      index: call.index,
      id: item.call_id,
      name: item.name,
      choice: 0,
    });
  }

  #finishCall(index: number, item: FunctionCallItem): void {
    const call = this.state.calls.get(index);
    if (!call || call.done) return;
    call.done = true;
    this.emit('tool_call.done', {
      type: 'tool_call.done',
      index: call.index,
      id: item.call_id,
      name: item.name,
      arguments: item.arguments === '' ? '{}' : item.arguments,
      choice: 0,
    });
  }

  /** On `response.completed` every function call is final, including calls first seen in the snapshot. */
  #finishPendingCalls(): void {
    for (const [index, item] of [...this.state.items].sort((a, b) => a[0] - b[0])) {
      if (item.type !== 'function_call') continue;
      if (!this.state.calls.has(index)) this.#startCall(index, item);
      this.#finishCall(index, item);
    }
  }

  /** Every raw reasoning text part of every reasoning item, joined (what the `reasoning_text` deltas build). */
  #rawReasoning(): string {
    let text = '';
    for (const item of this.#output()) {
      if (item.type === 'reasoning') for (const part of item.content ?? []) if (part.type === 'reasoning_text') text += part.text;
    }
    return text;
  }

  /**
   * A `.done` value settled one text kind: the running snapshot follows it when it changed the text. Nobody
   * listening, it is only marked stale, without comparing (a whole part's text, the deltas' rope made flat).
   */
  #corrected(kind: 'output_text' | 'summary' | 'reasoning_text', built: string, text: string): void {
    if (this.listenerCount(kind === 'output_text' ? 'content' : 'reasoning') === 0 || text !== built) this.#resync();
  }

  /** After a `.done` item or part replaced a built one, the running snapshots follow the authoritative text. */
  #resyncIfChanged(built: unknown, next: unknown): void {
    // Nobody listening, no comparison (see #corrected): the snapshots are rebuilt if a listener comes.
    if (!this.hears('content') && !this.hears('reasoning')) this.#resync();
    else if (shownText(built) !== shownText(next)) this.#resync();
  }

  #resync(): void {
    this.state.textStale = true;
    this.state.summaryStale = true;
    this.state.reasoningStale = true;
  }
}
