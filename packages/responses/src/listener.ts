/**
 * The Responses stream state machine: parsed events in, a rebuilt response object and normalized events out.
 *
 * Items are tracked by `output_index`, never by `item_id` (some gateways change ids between events). Deltas build
 * each item; `.done` events and the terminal response replace what the deltas built, but never erase it.
 */
import { AbortError, Ai4tsError, ApiError, ConnectionError, type ContentEvent, type ErrorEvent, type FinishEvent, type ReasoningEvent, readProviderError, StreamIncompleteError, type ToolCallDeltaEvent, type ToolCallDoneEvent, type ToolCallStartEvent, type UsageEvent } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { EventEmitter } from 'eventemitter3';
import { toChatUsage, toFinishReason } from './convert.js';
import type {
  Annotation,
  FunctionCallItem,
  MessageContentPart,
  OutputItem,
  ResponseObject,
  ResponseStreamEvent,
  ResponseUsage,
} from './types.js';

/** Where the listener stands. `failed` covers `response.failed`, an `error` event and a broken or cut stream. */
export type ResponseStreamStatus = 'streaming' | 'completed' | 'failed' | 'incomplete';

/** Something odd that did not stop the stream: a `sequence_number` gap or regression, or a malformed event. */
export interface ResponseStreamWarning {
  type: 'warning';
  code: 'sequence_gap' | 'sequence_regression' | 'malformed_event';
  message: string;
  event: unknown;
}

/** The events a {@link ResponseStreamListener} emits. */
export interface ResponseListenerEvents {
  content: (event: ContentEvent) => void;
  reasoning: (event: ReasoningEvent) => void;
  'tool_call.start': (event: ToolCallStartEvent) => void;
  'tool_call.delta': (event: ToolCallDeltaEvent) => void;
  'tool_call.done': (event: ToolCallDoneEvent) => void;
  usage: (event: UsageEvent) => void;
  finish: (event: FinishEvent) => void;
  error: (event: ErrorEvent) => void;
  /** Every event of a known type, as received. */
  event: (event: ResponseStreamEvent) => void;
  /** An event of a type this version does not know (kept in `events` as well). */
  unknown: (event: unknown) => void;
  warning: (warning: ResponseStreamWarning) => void;
}

/** Bookkeeping of one function call: its position among the calls, and whether `tool_call.done` went out. */
interface CallState {
  index: number;
  done: boolean;
}

type Json = Record<string, unknown>;

const KNOWN = new Set([
  'response.created',
  'response.in_progress',
  'response.queued',
  'response.completed',
  'response.failed',
  'response.incomplete',
  'response.output_item.added',
  'response.output_item.done',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.delta',
  'response.output_text.done',
  'response.output_text.annotation.added',
  'response.refusal.delta',
  'response.refusal.done',
  'response.reasoning_summary_part.added',
  'response.reasoning_summary_part.done',
  'response.reasoning_summary_text.delta',
  'response.reasoning_summary_text.done',
  'response.reasoning_text.delta',
  'response.reasoning_text.done',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.custom_tool_call_input.delta',
  'response.custom_tool_call_input.done',
  'error',
]);

/** `response.web_search_call.searching`, `response.mcp_call_arguments.delta`, ...: progress of built-in tools. */
const BUILT_IN =
  /^response\.(web_search_call|file_search_call|code_interpreter_call|image_generation_call|mcp_call|mcp_list_tools|code_interpreter_call_code|mcp_call_arguments)\.([a-z_]+)$/;

/**
 * Rebuilds a Responses API stream from its events.
 *
 * Feed it parsed events with {@link push} and call {@link end} when the input ends. It never throws on what the
 * server sends: a failure becomes {@link error} (with the partial response) and an `error` event.
 *
 * @example
 * const listener = new ResponseStreamListener().on('content', (e) => process.stdout.write(e.delta));
 * for (const event of events) listener.push(event);
 * listener.end();
 * if (listener.error) throw listener.error;
 * console.log(listener.response.output_text);
 */
export class ResponseStreamListener extends EventEmitter<ResponseListenerEvents> {
  #status: ResponseStreamStatus = 'streaming';
  #error: Ai4tsError<ResponseObject> | undefined;
  /** Set once the terminal event arrived or the stream failed: later events only join the trace. */
  #settled = false;
  #ended = false;
  readonly #events: unknown[] = [];
  #base: Json = { id: '', object: 'response', model: '', status: 'in_progress' };
  /** Items by `output_index` (a map, so an absurd index from a broken gateway costs nothing). */
  readonly #items = new Map<number, OutputItem>();
  /** The items in index order, rebuilt only after an item was added or replaced. */
  #ordered: OutputItem[] | undefined;
  readonly #calls = new Map<number, CallState>();
  #lastSequence: number | undefined;
  /** Running snapshots for the `content` and `reasoning` events (resynced when a `.done` event corrects them). */
  #text = '';
  #summary = '';
  #summaryKey = '';
  #reasoningText = '';

  /** `streaming` until a terminal event or a failure. */
  get status(): ResponseStreamStatus {
    return this.#status;
  }

  /** Why the stream failed (`ApiError`, `StreamIncompleteError`, ...), with `partial` set; undefined otherwise. */
  get error(): Ai4tsError<ResponseObject> | undefined {
    return this.#error;
  }

  /** Every value pushed, in order, including unknown events and those after the terminal one: the trace to replay. */
  get events(): readonly unknown[] {
    return this.#events;
  }

  /** The last value pushed. */
  get lastEvent(): unknown {
    return this.#events[this.#events.length - 1];
  }

  /** The `sequence_number` of the last numbered event before the terminal one (where a resumed stream goes on). */
  get lastSequenceNumber(): number | undefined {
    return this.#lastSequence;
  }

  /** The response as rebuilt so far: the latest lifecycle snapshot with the output items in `output_index` order. */
  get response(): ResponseObject {
    return { ...this.#base, output: this.#output(), output_text: this.outputText } as ResponseObject;
  }

  /** All answer text so far: every `output_text` part of every message, in order. */
  get outputText(): string {
    let text = '';
    for (const item of this.#output()) {
      if (item.type !== 'message') continue;
      for (const part of item.content) if (part?.type === 'output_text') text += part.text;
    }
    return text;
  }

  /** Every reasoning summary part of every reasoning item, joined with a blank line. */
  get reasoningSummary(): string {
    const parts: string[] = [];
    for (const item of this.#output()) {
      if (item.type === 'reasoning') for (const part of item.summary) if (part) parts.push(part.text);
    }
    return parts.join('\n\n');
  }

  /** The function calls so far, by `call_id`; each keeps its own argument string (partial until its `.done`). */
  get functionCalls(): Record<string, FunctionCallItem> {
    const calls: Record<string, FunctionCallItem> = {};
    for (const item of this.#output()) if (item.type === 'function_call') calls[item.call_id] = item;
    return calls;
  }

  /** Takes one parsed event (its `type` drives the state machine). Never throws on what the server sent. */
  push(event: unknown): void {
    this.#events.push(event);
    if (this.#settled) return;
    const type = isRecord(event) ? event.type : undefined;
    if (typeof type !== 'string' || !(KNOWN.has(type) || BUILT_IN.test(type))) {
      this.emit('unknown', event);
      return;
    }
    const e = event as Json;
    if (typeof e.sequence_number === 'number') this.#checkSequence(e.sequence_number, e);
    this.emit('event', event as ResponseStreamEvent);
    if (!this.#apply(type, e)) this.#warn('malformed_event', `Ignored a malformed ${type} event`, event);
  }

  /**
   * Marks the end of input. Without a terminal event this is a failure: {@link error} becomes a
   * `StreamIncompleteError` whose `partial` is the response so far (function calls keep their partial arguments).
   */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#settled) return;
    this.#settle(
      'failed',
      new StreamIncompleteError<ResponseObject>(
        'The Responses stream ended without a terminal event (response.completed, response.incomplete or response.failed)',
        { partial: this.response },
      ),
    );
  }

  /**
   * Records a failure of the source (a broken connection, an abort, a timeout, bad data) and returns it as an
   * `Ai4tsError` whose `partial` is the response so far, once any event arrived. Does nothing after the terminal event.
   */
  fail(error: unknown): Ai4tsError<ResponseObject> {
    if (this.#settled && this.#error) return this.#error;
    const failure = toAi4tsError(error);
    if (failure.partial === undefined && this.#events.length > 0) failure.partial = this.response;
    if (!this.#settled) this.#settle('failed', failure);
    return failure;
  }

  /** True once a terminal event arrived or the stream failed. */
  get settled(): boolean {
    return this.#settled;
  }

  #apply(type: string, e: Json): boolean {
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        if (!isRecord(e.response)) return false;
        this.#adopt(e.response, false);
        return true;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        if (!isRecord(e.response)) return false;
        this.#terminal(type, e.response);
        return true;
      case 'error':
        this.#streamError(e);
        return true;
      case 'response.output_item.added':
      case 'response.output_item.done':
        return this.#outputItem(type === 'response.output_item.done', e);
      case 'response.content_part.added':
      case 'response.content_part.done':
        return this.#contentPart(e);
      case 'response.output_text.delta':
        return this.#textDelta(e);
      case 'response.output_text.done':
        return this.#textDone(e);
      case 'response.output_text.annotation.added':
        return this.#annotation(e);
      case 'response.refusal.delta':
      case 'response.refusal.done':
        return this.#refusal(type === 'response.refusal.done', e);
      case 'response.reasoning_summary_part.added':
      case 'response.reasoning_summary_part.done':
        return this.#summaryPart(e);
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_summary_text.done':
        return this.#summaryText(type === 'response.reasoning_summary_text.done', e);
      case 'response.reasoning_text.delta':
      case 'response.reasoning_text.done':
        return this.#reasoningTextEvent(type === 'response.reasoning_text.done', e);
      case 'response.function_call_arguments.delta':
        return this.#argumentsDelta(e);
      case 'response.function_call_arguments.done':
        return this.#argumentsDone(e);
      case 'response.custom_tool_call_input.delta':
      case 'response.custom_tool_call_input.done':
        return this.#customInput(type === 'response.custom_tool_call_input.done', e);
      default:
        return this.#builtIn(type, e);
    }
  }

  // --- lifecycle -------------------------------------------------------------------------------------------

  /**
   * Takes a lifecycle snapshot. Its fields replace ours; its `output` replaces the built items only when it is
   * authoritative (terminal) and no shorter than what was built, or when nothing was built yet.
   */
  #adopt(snapshot: Json, terminal: boolean): void {
    const { output, output_text: _derived, ...fields } = snapshot;
    this.#base = { ...this.#base, ...fields };
    if (!Array.isArray(output)) return;
    const built = this.#output().length;
    if (built === 0 || (terminal && output.length >= built)) {
      this.#items.clear();
      output.forEach((item, index) => {
        if (isRecord(item)) this.#setItem(index, copyItem(item as OutputItem));
      });
    }
  }

  #terminal(type: string, snapshot: Json): void {
    this.#adopt(snapshot, true);
    this.#emitUsage();
    if (type === 'response.failed') {
      const info = isRecord(snapshot.error) ? snapshot.error : { message: 'The response failed' };
      this.#settle('failed', streamApiError(info, snapshot, this.response));
      return;
    }
    const complete = type === 'response.completed';
    if (complete) this.#finishPendingCalls();
    this.#settle(complete ? 'completed' : 'incomplete');
    const finishReason = toFinishReason({ ...this.response, status: complete ? 'completed' : 'incomplete' });
    this.emit('finish', { type: 'finish', finishReason, choice: 0 });
  }

  /** An `error` event, flat `{code, message}` or nested `{error: {code, message}}`: terminal, an ApiError. */
  #streamError(e: Json): void {
    const info = isRecord(e.error) ? e.error : e;
    this.#settle('failed', streamApiError(info, e, this.response));
  }

  #settle(status: ResponseStreamStatus, error?: Ai4tsError<ResponseObject>): void {
    this.#status = status;
    this.#settled = true;
    if (!error) return;
    this.#error = error;
    this.emit('error', { type: 'error', error });
  }

  #emitUsage(): void {
    const raw = this.#base.usage;
    if (isRecord(raw) && typeof raw.input_tokens === 'number') {
      this.emit('usage', { type: 'usage', usage: toChatUsage(raw as ResponseUsage), raw });
    }
  }

  #checkSequence(sequence: number, event: Json): void {
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
    if (!this.#ordered) {
      const entries = [...this.#items].sort((a, b) => a[0] - b[0]);
      this.#ordered = entries.map(([, item]) => item);
    }
    return this.#ordered;
  }

  #setItem(index: number, item: OutputItem): void {
    this.#items.set(index, item);
    this.#ordered = undefined;
  }

  /**
   * The index an event refers to: its `output_index`, else the item with its `item_id`, else the last item.
   * Undefined for an index that is not a non-negative integer.
   */
  #indexOf(e: Json): number | undefined {
    const index = e.output_index;
    if (typeof index === 'number') return isIndex(index) ? index : undefined;
    let last = 0;
    for (const [at, item] of this.#items) {
      if (item.id === e.item_id) return at;
      last = Math.max(last, at);
    }
    return last;
  }

  /**
   * The item an event refers to, created on the fly when the stream skipped its `output_item.added`
   * (so nothing is lost). Undefined when the slot holds an item of another type.
   */
  #item<T extends OutputItem['type']>(e: Json, type: T): Extract<OutputItem, { type: T }> | undefined {
    const index = this.#indexOf(e);
    if (index === undefined) return undefined;
    let item = this.#items.get(index);
    if (!item) {
      item = placeholder(type, typeof e.item_id === 'string' ? e.item_id : '');
      this.#setItem(index, item);
      if (item.type === 'function_call') this.#startCall(index, item);
    }
    return item.type === type ? (item as Extract<OutputItem, { type: T }>) : undefined;
  }

  #outputItem(done: boolean, e: Json): boolean {
    if (!isRecord(e.item) || typeof e.item.type !== 'string') return false;
    const index = this.#indexOf(e);
    if (index === undefined) return false;
    const built = this.#items.get(index);
    const item = built ? mergeItem(built, e.item) : copyItem(e.item as OutputItem);
    this.#setItem(index, item);
    if (built) this.#resyncIfChanged(built, item);
    if (item.type !== 'function_call') return true;
    if (!this.#calls.has(index)) this.#startCall(index, item);
    if (done && item.status !== 'incomplete') this.#finishCall(index, item);
    return true;
  }

  #contentPart(e: Json): boolean {
    if (!isRecord(e.part) || !isIndex(e.content_index)) return false;
    const index = this.#indexOf(e);
    if (index === undefined) return false;
    const item = this.#items.get(index) ?? this.#item(e, e.part.type === 'reasoning_text' ? 'reasoning' : 'message');
    if (!item) return false;
    if (item.type === 'reasoning' && !item.content) item.content = [];
    const list = item.type === 'message' || item.type === 'reasoning' ? item.content : undefined;
    if (!list || !isSlot(list, e.content_index)) return false;
    const built = list[e.content_index] as Json | undefined;
    const part = built ? mergeRecord(built, e.part) : copyPart(e.part);
    list[e.content_index] = part as never;
    if (built) this.#resyncIfChanged(built, part);
    return true;
  }

  #textDelta(e: Json): boolean {
    const part = typeof e.delta === 'string' ? this.#messagePart(e, 'output_text') : undefined;
    if (!part) return false;
    const delta = e.delta as string;
    part.text += delta;
    this.#text += delta;
    if (this.listenerCount('content') > 0) {
      this.emit('content', { type: 'content', delta, snapshot: this.#text, choice: 0 });
    }
    return true;
  }

  #textDone(e: Json): boolean {
    const part = typeof e.text === 'string' ? this.#messagePart(e, 'output_text') : undefined;
    if (!part) return false;
    const text = final(part.text, e.text as string);
    if (part.text !== text) {
      part.text = text;
      this.#resync();
    }
    return true;
  }

  #annotation(e: Json): boolean {
    const part = isRecord(e.annotation) ? this.#messagePart(e, 'output_text') : undefined;
    if (!part) return false;
    const at = e.annotation_index ?? part.annotations.length;
    if (!isIndex(at) || !isSlot(part.annotations, at)) return false;
    part.annotations[at] = { ...(e.annotation as Annotation) };
    return true;
  }

  #refusal(done: boolean, e: Json): boolean {
    const value = done ? e.refusal : e.delta;
    const part = typeof value === 'string' ? this.#messagePart(e, 'refusal') : undefined;
    if (!part) return false;
    part.refusal = done ? final(part.refusal, value as string) : part.refusal + value;
    return true;
  }

  /**
   * The message content part an event refers to, created when the stream skipped `content_part.added`.
   * Undefined when that slot holds a part of another type.
   */
  #messagePart<T extends MessageContentPart['type']>(
    e: Json,
    type: T,
  ): Extract<MessageContentPart, { type: T }> | undefined {
    if (!isIndex(e.content_index)) return undefined;
    const message = this.#item(e, 'message');
    if (!message || !isSlot(message.content, e.content_index)) return undefined;
    let part = message.content[e.content_index];
    if (!part) {
      part = type === 'output_text' ? { type: 'output_text', text: '', annotations: [] } : { type: 'refusal', refusal: '' };
      message.content[e.content_index] = part;
    }
    return part.type === type ? (part as Extract<MessageContentPart, { type: T }>) : undefined;
  }

  #summaryPart(e: Json): boolean {
    if (!isRecord(e.part) || !isIndex(e.summary_index)) return false;
    const item = this.#item(e, 'reasoning');
    if (!item || !isSlot(item.summary, e.summary_index)) return false;
    const built = item.summary[e.summary_index];
    const part = built ? mergeRecord(built as never, e.part) : copyPart(e.part);
    item.summary[e.summary_index] = part as never;
    if (built) this.#resyncIfChanged(built, part);
    return true;
  }

  #summaryText(done: boolean, e: Json): boolean {
    const value = done ? e.text : e.delta;
    if (typeof value !== 'string' || !isIndex(e.summary_index)) return false;
    const item = this.#item(e, 'reasoning');
    if (!item || !isSlot(item.summary, e.summary_index)) return false;
    let part = item.summary[e.summary_index];
    if (!part) {
      part = { type: 'summary_text', text: '' };
      item.summary[e.summary_index] = part;
    }
    if (done) {
      const text = final(part.text, value);
      if (part.text !== text) {
        part.text = text;
        this.#resync();
      }
      return true;
    }
    part.text += value;
    const key = `${this.#indexOf(e)}:${e.summary_index}`;
    if (key !== this.#summaryKey && this.#summary !== '') this.#summary += '\n\n';
    this.#summaryKey = key;
    this.#summary += value;
    if (this.listenerCount('reasoning') > 0) {
      this.emit('reasoning', { type: 'reasoning', delta: value, snapshot: this.#summary, choice: 0 });
    }
    return true;
  }

  #reasoningTextEvent(done: boolean, e: Json): boolean {
    const value = done ? e.text : e.delta;
    if (typeof value !== 'string' || !isIndex(e.content_index)) return false;
    const item = this.#item(e, 'reasoning');
    if (!item) return false;
    if (!item.content) item.content = [];
    const content = item.content;
    if (!isSlot(content, e.content_index)) return false;
    let part = content[e.content_index];
    if (!part) {
      part = { type: 'reasoning_text', text: '' };
      content[e.content_index] = part;
    }
    if (done) {
      part.text = final(part.text, value);
      return true;
    }
    part.text += value;
    this.#reasoningText += value;
    if (this.listenerCount('reasoning') > 0) {
      this.emit('reasoning', { type: 'reasoning', delta: value, snapshot: this.#reasoningText, choice: 0 });
    }
    return true;
  }

  // --- function and custom tool calls ----------------------------------------------------------------------

  #argumentsDelta(e: Json): boolean {
    const item = typeof e.delta === 'string' ? this.#item(e, 'function_call') : undefined;
    if (!item) return false;
    const delta = e.delta as string;
    item.arguments += delta;
    const call = this.#calls.get(this.#indexOf(e) as number);
    if (call && this.listenerCount('tool_call.delta') > 0) {
      this.emit('tool_call.delta', { type: 'tool_call.delta', index: call.index, id: item.call_id, delta, choice: 0 });
    }
    return true;
  }

  #argumentsDone(e: Json): boolean {
    const item = typeof e.arguments === 'string' ? this.#item(e, 'function_call') : undefined;
    if (!item) return false;
    item.arguments = final(item.arguments, e.arguments as string);
    if (!item.name && typeof e.name === 'string') item.name = e.name;
    this.#finishCall(this.#indexOf(e) as number, item);
    return true;
  }

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
    [...this.#items].sort((a, b) => a[0] - b[0]).forEach(([index, item]) => {
      if (item.type !== 'function_call') return;
      if (!this.#calls.has(index)) this.#startCall(index, item);
      this.#finishCall(index, item);
    });
  }

  #customInput(done: boolean, e: Json): boolean {
    const value = done ? e.input : e.delta;
    const item = typeof value === 'string' ? this.#item(e, 'custom_tool_call') : undefined;
    if (!item) return false;
    item.input = done ? final(item.input, value as string) : item.input + value;
    return true;
  }

  /** Built-in tool progress: the suffix is the item's new status; code and MCP argument deltas build their field. */
  #builtIn(type: string, e: Json): boolean {
    const match = BUILT_IN.exec(type);
    const index = this.#indexOf(e);
    const item = match && index !== undefined ? (this.#items.get(index) as Json | undefined) : undefined;
    if (!match || !item) return false;
    const [, kind, step] = match;
    const field = kind === 'code_interpreter_call_code' ? 'code' : kind === 'mcp_call_arguments' ? 'arguments' : '';
    if (field === '') {
      if (step !== 'partial_image') item.status = step;
      return true;
    }
    const value = step === 'done' ? e[field] : e.delta;
    if (typeof value !== 'string') return false;
    item[field] = step === 'done' ? value : (typeof item[field] === 'string' ? item[field] : '') + value;
    return true;
  }

  /** After a `.done` event corrected built text, the running snapshots follow the authoritative text. */
  #resyncIfChanged(built: unknown, next: unknown): void {
    if (shownText(built) !== shownText(next)) this.#resync();
  }

  #resync(): void {
    this.#text = this.outputText;
    this.#summary = this.reasoningSummary;
  }
}

function streamApiError(info: Json, body: unknown, partial: ResponseObject): ApiError<ResponseObject> {
  // The flat error event's own `type` is the event type ('error'), not an error type.
  const read = readProviderError({ ...info, type: info.type === 'error' ? undefined : info.type });
  return new ApiError<ResponseObject>(read?.message ?? 'The Responses stream reported an error', {
    code: read?.code ?? read?.type,
    type: read?.type,
    param: read?.param,
    body,
    partial,
  });
}

function toAi4tsError(error: unknown): Ai4tsError<ResponseObject> {
  if (error instanceof Ai4tsError) return error as Ai4tsError<ResponseObject>;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name === 'AbortError') return new AbortError(message, { cause: error });
  return new ConnectionError(`The stream source failed: ${message}`, { cause: error });
}

/** How far past the parts built so far an index may point (a skipped part); beyond it the stream is broken. */
const MAX_INDEX_GAP = 64;

/** A non-negative integer. */
function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Whether `index` is near the end of `list`: an absurd index must not make a huge sparse array every read walks. */
function isSlot(list: readonly unknown[], index: number): boolean {
  return index <= list.length + MAX_INDEX_GAP;
}

/** A `.done` event's whole string is authoritative, but an empty one never erases what the deltas built. */
function final(built: string, done: string): string {
  return done === '' ? built : done;
}

/** The text an item or part shows in `outputText` / `reasoningSummary`: to tell whether a correction changed it. */
function shownText(value: unknown): string {
  if (!isRecord(value)) return '';
  if (typeof value.text === 'string') return value.text;
  const parts = value.type === 'message' ? value.content : value.type === 'reasoning' ? value.summary : undefined;
  if (!Array.isArray(parts)) return '';
  let text = '';
  for (const part of parts) if (isRecord(part) && typeof part.text === 'string') text += `${part.text}\u0000`;
  return text;
}

function placeholder(type: OutputItem['type'], id: string): OutputItem {
  switch (type) {
    case 'message':
      return { type, id, role: 'assistant', status: 'in_progress', content: [] };
    case 'reasoning':
      return { type, id, summary: [] };
    case 'function_call':
      return { type, id, call_id: id, name: '', arguments: '', status: 'in_progress' };
    case 'custom_tool_call':
      return { type, id, call_id: id, name: '', input: '' };
    default:
      return { type, id };
  }
}

/** A copy deep enough that building on it never touches the event it came from (the trace stays replayable). */
function copyItem(item: OutputItem): OutputItem {
  const copy = { ...item } as Json;
  if (Array.isArray(copy.content)) copy.content = copy.content.map(copyPart);
  if (Array.isArray(copy.summary)) copy.summary = copy.summary.map(copyPart);
  return copy as OutputItem;
}

function copyPart(part: unknown): unknown {
  if (!isRecord(part)) return part;
  return Array.isArray(part.annotations) ? { ...part, annotations: [...part.annotations] } : { ...part };
}

/**
 * An authoritative record over a built one: its fields win, except that it never erases. A field it lacks, sets
 * to null or to an empty string keeps a built value, and a shorter array keeps the built array.
 */
function mergeRecord(built: Json, next: Json): Json {
  const merged: Json = { ...built };
  for (const [key, value] of Object.entries(next)) {
    const prev = built[key];
    const erases =
      value === undefined ||
      value === null ||
      value === '' ||
      (Array.isArray(value) && Array.isArray(prev) && value.length < prev.length);
    if (erases && prev !== undefined && prev !== null && prev !== '') continue;
    merged[key] = Array.isArray(value) ? value.map(copyPart) : value;
  }
  return merged;
}

function mergeItem(built: OutputItem, next: Json): OutputItem {
  return mergeRecord(built as Json, next) as OutputItem;
}
