/**
 * The Responses stream state machine: parsed events in, a rebuilt response object and normalized events out.
 *
 * Items are tracked by `output_index`, never by `item_id` (some gateways change ids between events). Deltas build
 * each item; `.done` events and the terminal response replace what the deltas built, but never erase it.
 */
import {
  type Ai4tsError,
  ApiError,
  type ListenerStatus,
  type NormalizedEvents,
  type RetryEvents,
  ProtocolError,
  type StreamEvent,
  StreamIncompleteError,
  type StreamListener,
} from '@ai4ts/core';
import { getOwn, isRecord, toAi4tsError } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { EventEmitter } from 'eventemitter3';
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
export interface ResponseStreamWarning {
  type: 'warning';
  code: 'sequence_gap' | 'sequence_regression' | 'malformed_event';
  message: string;
  event: unknown;
}

/**
 * The events a {@link ResponseStreamListener} emits: the normalized ones and `error`, plus the Responses extras and
 * the handle's `retry`.
 */
export interface ResponseStreamEvents extends Pick<NormalizedEvents, StreamEvent['type'] | 'error'>, RetryEvents {
  /** Every event of a known type, as received (before the normalized events it causes). */
  event: (event: ResponseStreamEvent) => void;
  /** An event of a type this version does not know (kept in `events` as well). */
  unknown: (event: unknown) => void;
  warning: (warning: ResponseStreamWarning) => void;
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

/** Options of a {@link ResponseStreamListener}. */
export interface ResponseStreamListenerOptions {
  /**
   * Keep every value pushed in {@link ResponseStreamListener.events}, the trace a stream is resumed or replayed
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
 * const listener = new ResponseStreamListener().on('content', (e) => process.stdout.write(e.delta));
 * for (const event of events) listener.push(event);
 * const response = listener.end(); // throws the typed error of a failed or cut stream
 */
export class ResponseStreamListener
  extends EventEmitter<ResponseStreamEvents>
  implements StreamListener<ResponseObject>
{
  #status: ListenerStatus = 'pending';
  #error: Ai4tsError<ResponseObject> | undefined;
  readonly #events: unknown[] = [];
  readonly #trace: boolean;
  /** Values pushed, and the last one: kept without the trace too. */
  #pushed = 0;
  #last: unknown;
  /** The latest lifecycle snapshot; its `output` is unused (the items below are the output). */
  #base: ResponseSnapshot = { id: '', object: 'response', model: '', status: 'in_progress', output: [] };
  /** Items by `output_index` (a map, so an absurd index from a broken gateway costs nothing). */
  readonly #items = new Map<number, OutputItem>();
  /**
   * The items in index order, kept as they come: an item at a higher index is appended, a replaced one changes in
   * place (`#positions`), and only a late lower index makes the next read sort (never a sort or walk per event).
   */
  #ordered: OutputItem[] = [];
  readonly #positions = new Map<number, number>();
  #unordered = false;
  /** The highest index so far (0 when none): where an event without `output_index` or a known `item_id` goes. */
  #lastIndex = 0;
  /** The index of the first item holding each `item_id`, checked on use (an item may change its id). */
  readonly #byId = new Map<string, number>();
  /**
   * The running snapshot is behind the items: a `.done` event corrected built text, or deltas came while nobody
   * listened (no snapshot is kept then). Rebuilt from the items when a listener next needs it, not per event.
   */
  #textStale = false;
  #summaryStale = false;
  #reasoningStale = false;
  readonly #calls = new Map<number, CallState>();
  /**
   * The slot the last delta went to, for the next delta of the same run: no lookup and no new slot per token. It
   * holds while `#layout` is unchanged (an item or a part replaced) and the delta points at the same place.
   */
  #deltaSlot: TextSlot | undefined;
  #deltaKind: TextKind | undefined;
  #deltaOutput: unknown;
  #deltaPart: unknown;
  #deltaLayout = 0;
  /** Counts the replacements of items and parts: a slot found before one may point at what is no longer there. */
  #layout = 0;
  #lastSequence: number | undefined;
  /**
   * Running snapshots for the `content` and `reasoning` events, kept only while someone listens (stale otherwise,
   * and after a `.done` event corrected them: rebuilt from the items).
   */
  #text = '';
  #summary = '';
  /** The summary part the last summary delta went to (a new one is set apart by a blank line). */
  #summaryItem = -1;
  #summaryIndex = -1;
  #reasoningText = '';

  /** See the class comment. */
  get status(): ListenerStatus {
    return this.#status;
  }

  /** Why the stream failed (`ApiError`, `StreamIncompleteError`, ...), with `partial` set; undefined otherwise. */
  get error(): Ai4tsError<ResponseObject> | undefined {
    return this.#error;
  }

  constructor(options: ResponseStreamListenerOptions = {}) {
    super();
    this.#trace = options.trace ?? true;
  }

  /**
   * Every value pushed, in order, including unknown events and those after the terminal one: the trace to replay.
   * Always empty for a listener created with `trace: false`.
   */
  get events(): readonly unknown[] {
    return this.#events;
  }

  /** The last value pushed. */
  get lastEvent(): unknown {
    return this.#last;
  }

  /** The `sequence_number` of the last numbered event before the terminal one (where a resumed stream goes on). */
  get lastSequenceNumber(): number | undefined {
    return this.#lastSequence;
  }

  /** The response as rebuilt so far: the latest lifecycle snapshot with the output items in `output_index` order. */
  get response(): ResponseObject {
    // A copy: the list grows in place as items arrive, and a response read earlier must not change.
    const output = [...this.#output()];
    return { ...this.#base, output, output_text: outputTextOf(output) };
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
  pushSse(sse: SseEvent): void {
    const data = sse.data;
    // Blank data is skipped; an event object (`{`, every event on the hot path) cannot be blank, so no `trim()`.
    if (data.charCodeAt(0) !== 123 && data.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (cause) {
      if (data === '[DONE]' || this.#finished()) {
        this.push(data);
        return;
      }
      throw this.#record(
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
    this.#pushed++;
    this.#last = data;
    if (this.#trace) this.#events.push(data);
    if (this.#finished()) return;
    this.#status = 'streaming';
    if (!isKnownEvent(data)) {
      this.emit('unknown', data);
      return;
    }
    if (typeof data.sequence_number === 'number') this.#checkSequence(data.sequence_number, data);
    this.emit('event', data);
    if (!this.#apply(data)) this.#warn('malformed_event', `Ignored a malformed ${data.type} event`, data);
  }

  /**
   * The input ended: returns the final response after `response.completed` / `response.incomplete`. Otherwise
   * throws: the recorded error, or (recorded now) a `StreamIncompleteError` whose `partial` is the response so far
   * (none when nothing arrived).
   */
  end(): ResponseObject {
    if (this.#status === 'completed') return this.response;
    if (this.#error) throw this.#error;
    throw this.fail(
      new StreamIncompleteError<ResponseObject>(
        'The Responses stream ended without a terminal event (response.completed, response.incomplete or response.failed)',
      ),
    );
  }

  /**
   * Records a failure from outside the stream (a broken connection, an abort, a timeout) and returns it as an
   * `Ai4tsError` whose `partial` is the response so far, once anything was pushed. Once failed it returns the first
   * error; after completion it records nothing.
   */
  fail(error: unknown): Ai4tsError<ResponseObject> {
    if (this.#error) return this.#error;
    const partial = this.#status === 'pending' ? undefined : this.response;
    const failure = toAi4tsError(error, { partial });
    return this.#status === 'completed' ? failure : this.#record(failure);
  }

  /** Back to a new listener's state (handlers kept), for a stream sent again; see core's StreamListener. */
  reset(): void {
    this.#status = 'pending';
    this.#error = undefined;
    this.#events.length = 0;
    this.#pushed = 0;
    this.#last = undefined;
    this.#base = { id: '', object: 'response', model: '', status: 'in_progress', output: [] };
    this.#clearItems();
    this.#textStale = false;
    this.#summaryStale = false;
    this.#reasoningStale = false;
    this.#calls.clear();
    this.#deltaSlot = undefined;
    this.#lastSequence = undefined;
    this.#text = '';
    this.#summary = '';
    this.#summaryItem = -1;
    this.#summaryIndex = -1;
    this.#reasoningText = '';
  }

  #finished(): boolean {
    return this.#status === 'completed' || this.#status === 'failed';
  }

  #record(error: Ai4tsError<ResponseObject>): Ai4tsError<ResponseObject> {
    this.#status = 'failed';
    this.#error = error;
    this.emit('error', { type: 'error', error });
    return error;
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
        throw this.#record(
          ApiError.fromStreamError(
            isRecord(event.error) ? event : { ...event, type: undefined },
            this.#pushed === 1 ? undefined : this.response,
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
    this.#base = { ...this.#base, ...fields };
    if (!Array.isArray(output)) return;
    const built = this.#items.size;
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
    if (event.type === 'response.failed') throw this.#record(ApiError.fromStreamError(event.response, this.response));
    const completed = event.type === 'response.completed';
    // A truncated turn's calls may hold partial arguments: only a completed one finishes them.
    if (completed) this.#finishPendingCalls();
    this.#status = 'completed';
    const finishReason = toFinishReason({
      output: this.#output(),
      incomplete_details: this.#base.incomplete_details,
      status: completed ? 'completed' : 'incomplete',
    });
    this.emit('finish', { type: 'finish', finishReason, choice: 0 });
  }

  #emitUsage(): void {
    const raw = this.#base.usage;
    if (isRecord(raw) && typeof raw.input_tokens === 'number') {
      this.emit('usage', { type: 'usage', usage: toChatUsage(raw), raw });
    }
  }

  #checkSequence(sequence: number, event: unknown): void {
    const last = this.#lastSequence;
    if (last !== undefined && sequence !== last + 1) {
      const regression = sequence <= last;
      this.#warn(
        regression ? 'sequence_regression' : 'sequence_gap',
        `sequence_number ${sequence} after ${last}${regression ? '' : ` (${sequence - last - 1} missing)`}`,
        event,
      );
    }
    this.#lastSequence = last === undefined ? sequence : Math.max(last, sequence);
  }

  #warn(code: ResponseStreamWarning['code'], message: string, event: unknown): void {
    this.emit('warning', { type: 'warning', code, message, event });
  }

  // --- output items ----------------------------------------------------------------------------------------

  /** The items in `output_index` order (an index the stream skipped leaves no hole). */
  #output(): OutputItem[] {
    if (this.#unordered) {
      const entries = [...this.#items].sort((a, b) => a[0] - b[0]);
      this.#ordered = entries.map(([, item]) => item);
      this.#positions.clear();
      entries.forEach(([index], position) => {
        this.#positions.set(index, position);
      });
      this.#unordered = false;
    }
    return this.#ordered;
  }

  #setItem(index: number, item: OutputItem): void {
    this.#layout++;
    const replaced = this.#items.has(index);
    this.#items.set(index, item);
    if (typeof item.id === 'string') {
      const holder = this.#byId.get(item.id);
      if (holder === undefined || this.#items.get(holder)?.id !== item.id) this.#byId.set(item.id, index);
    }
    if (this.#unordered) return;
    const position = this.#positions.get(index);
    if (replaced && position !== undefined) this.#ordered[position] = item;
    else if (this.#ordered.length === 0 || index > this.#lastIndex) {
      this.#positions.set(index, this.#ordered.length);
      this.#ordered.push(item);
    } else this.#unordered = true;
    this.#lastIndex = Math.max(this.#lastIndex, index);
  }

  #clearItems(): void {
    this.#layout++;
    this.#items.clear();
    this.#ordered = [];
    this.#positions.clear();
    this.#unordered = false;
    this.#lastIndex = 0;
    this.#byId.clear();
  }

  /**
   * The index an event refers to: its `output_index`, else the item with its `item_id`, else the last item.
   * Undefined for an index that is not a non-negative integer.
   */
  #indexOf(at: ItemAddress): number | undefined {
    const index = at.output_index;
    if (index !== undefined) return isIndex(index) ? index : undefined;
    const id = at.item_id;
    const found = typeof id === 'string' ? this.#byId.get(id) : undefined;
    return found !== undefined && this.#items.get(found)?.id === id ? found : this.#lastIndex;
  }

  /** The item at `index`, created as `type` when the stream skipped its `output_item.added` (so nothing is lost). */
  #itemAt(index: number, type: PlaceholderType, at: ItemAddress): OutputItem {
    let item = this.#items.get(index);
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
    const built = this.#items.get(index);
    const item = built ? mergeRecord(built, event.item) : copyRecord(event.item);
    if (!isOutputItem(item)) return false;
    this.#setItem(index, item);
    if (built) this.#resyncIfChanged(built, item);
    if (item.type !== 'function_call') return true;
    if (!this.#calls.has(index)) this.#startCall(index, item);
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
      this.#layout++;
    } else if (item.type === 'reasoning' && isSlot(item.content ?? [], at)) {
      item.content ??= [];
      built = item.content[at];
      part = built ? mergeRecord(built, event.part) : copyRecord(event.part);
      if (!isReasoningTextPart(part)) return false;
      setPart(item.content, at, part, emptyReasoningText);
      this.#layout++;
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
    this.#layout++;
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
    if (
      this.#deltaSlot !== undefined &&
      this.#deltaLayout === this.#layout &&
      this.#deltaKind === kind &&
      this.#deltaOutput === output &&
      this.#deltaPart === part
    )
      return this.#deltaSlot;
    const slot = this.#slot(kind, event);
    // Only an event with its output_index is cached: one addressed by item_id may go elsewhere with the same fields.
    this.#deltaSlot = typeof output === 'number' ? slot : undefined;
    this.#deltaKind = kind;
    this.#deltaOutput = output;
    this.#deltaPart = part;
    this.#deltaLayout = this.#layout;
    return slot;
  }

  /** Emits the normalized event of a delta. Objects are only built when someone listens (the hot path). */
  #streamed(kind: TextKind, slot: TextSlot, event: TextAddress, delta: string): void {
    switch (kind) {
      case 'output_text':
        // Nobody listens: no snapshot is kept (a second copy of the text), it is rebuilt if someone comes.
        if (this.listenerCount('content') === 0) {
          this.#textStale = true;
          return;
        }
        if (this.#textStale) {
          this.#textStale = false;
          this.#text = this.outputText; // the items already hold this delta
        } else this.#text += delta;
        this.emit('content', { type: 'content', delta, snapshot: this.#text, choice: 0 });
        return;
      case 'summary': {
        const part = typeof event.summary_index === 'number' ? event.summary_index : -1;
        const newPart = slot.index !== this.#summaryItem || part !== this.#summaryIndex;
        this.#summaryItem = slot.index;
        this.#summaryIndex = part;
        if (this.listenerCount('reasoning') === 0) {
          this.#summaryStale = true;
          return;
        }
        if (this.#summaryStale) {
          this.#summaryStale = false;
          this.#summary = this.reasoningSummary;
        } else {
          if (newPart && this.#summary !== '') this.#summary += '\n\n';
          this.#summary += delta;
        }
        this.emit('reasoning', { type: 'reasoning', delta, snapshot: this.#summary, choice: 0 });
        return;
      }
      case 'reasoning_text':
        if (this.listenerCount('reasoning') === 0) {
          this.#reasoningStale = true;
          return;
        }
        if (this.#reasoningStale) {
          this.#reasoningStale = false;
          this.#reasoningText = this.#rawReasoning();
        } else this.#reasoningText += delta;
        this.emit('reasoning', { type: 'reasoning', delta, snapshot: this.#reasoningText, choice: 0 });
        return;
      case 'arguments': {
        if (this.listenerCount('tool_call.delta') === 0) return;
        const call = this.#calls.get(slot.index);
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
        const item = this.#items.get(index);
        return item && { holder: item, field: kind === 'code' ? 'code' : 'arguments', item, index };
      }
    }
  }

  /** Built-in tool progress: the suffix is the item's new status; code and MCP argument deltas build their field. */
  #builtIn(event: BuiltInToolCallEvent): boolean {
    const read = builtInStep(event.type);
    const index = this.#indexOf(event);
    const item = read && index !== undefined ? this.#items.get(index) : undefined;
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
    const call = { index: this.#calls.size, done: false };
    this.#calls.set(index, call);
    this.emit('tool_call.start', {
      type: 'tool_call.start',
      index: call.index,
      id: item.call_id,
      name: item.name,
      choice: 0,
    });
  }

  #finishCall(index: number, item: FunctionCallItem): void {
    const call = this.#calls.get(index);
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
    for (const [index, item] of [...this.#items].sort((a, b) => a[0] - b[0])) {
      if (item.type !== 'function_call') continue;
      if (!this.#calls.has(index)) this.#startCall(index, item);
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
    if (this.listenerCount('content') === 0 && this.listenerCount('reasoning') === 0) this.#resync();
    else if (shownText(built) !== shownText(next)) this.#resync();
  }

  #resync(): void {
    this.#textStale = true;
    this.#summaryStale = true;
    this.#reasoningStale = true;
  }
}
