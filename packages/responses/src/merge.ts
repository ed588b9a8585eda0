/**
 * The pure helpers of the Responses listener: copying what an event carries so building on it never touches the
 * event (the trace stays replayable), merging an authoritative `.done` record over a built one without erasing,
 * and the guards that tell a record the listener may build on.
 */
import { assertNever, getOwn, isRecord, setOwn } from '@ai4ts/core/internal';
import type {
  MessageContentPart,
  OutputItem,
  ReasoningSummaryPart,
  ReasoningTextPart,
} from './types.js';

/** A JSON object as it came off the wire. */
export type Json = Record<string, unknown>;

/** How far past the parts built so far an index may point (a skipped part); beyond it the stream is broken. */
export const MAX_INDEX_GAP = 64;

/** A non-negative integer. */
export function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Whether `index` is near the end of `list`: an absurd index must not make a huge sparse array every read walks. */
export function isSlot(list: readonly unknown[], index: number): boolean {
  return index <= list.length + MAX_INDEX_GAP;
}

/**
 * Puts `part` at `at` in a list of parts, first filling the parts the stream skipped (at most {@link MAX_INDEX_GAP})
 * with empty ones from `skipped`: a list never has holes for readers to trip on or JSON to turn into nulls.
 */
export function setPart<T>(list: T[], at: number, part: T, skipped: () => T): T {
  while (list.length < at) list.push(skipped());
  list[at] = part;
  return part;
}

/** The empty parts that fill a skip: the delta and `.done` events of the skipped part, if they come, build on them. */
export const emptyTextPart = (): MessageContentPart => ({ type: 'output_text', text: '', annotations: [] });
export const emptySummary = (): ReasoningSummaryPart => ({ type: 'summary_text', text: '' });
export const emptyReasoningText = (): ReasoningTextPart => ({ type: 'reasoning_text', text: '' });

/** A `.done` event's whole string is authoritative, but an empty one never erases what the deltas built. */
export function doneText(built: string, done: string): string {
  return done === '' ? built : done;
}

/** The text an item or part shows in `outputText` / `reasoningSummary`: to tell whether a correction changed it. */
export function shownText(value: unknown): string {
  if (!isRecord(value)) return '';
  if (typeof value.text === 'string') return value.text;
  if (value.type === 'message') return partsText(value.content);
  if (value.type !== 'reasoning') return '';
  // A reasoning item shows its summary, and its raw reasoning text (content) set apart.
  const raw = partsText(value.content);
  return raw === '' ? partsText(value.summary) : `${partsText(value.summary)}\u0001${raw}`;
}

/** The text of each part of a list, each ended by U+0000; '' for what is not a list. */
function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  let text = '';
  for (const part of parts) if (isRecord(part) && typeof part.text === 'string') text += `${part.text}\u0000`;
  return text;
}

/**
 * A record (an item or a part) copied deep enough that building on it never touches the event it came from:
 * the lists the listener builds on (`content`, `summary`, `annotations`) and their parts are copied too.
 */
export function copyRecord(record: Json): Json {
  const copy: Json = { ...record };
  if (Array.isArray(copy.content)) copy.content = copy.content.map(copyPart);
  if (Array.isArray(copy.summary)) copy.summary = copy.summary.map(copyPart);
  if (Array.isArray(copy.annotations)) copy.annotations = [...copy.annotations];
  return copy;
}

/** {@link copyRecord} of a record, anything else as it is. */
export function copyPart(part: unknown): unknown {
  return isRecord(part) ? copyRecord(part) : part;
}

/**
 * An authoritative record over a built one: its fields win, except that it never erases. A field it lacks, sets
 * to null or to an empty string keeps a built value, and a shorter array keeps the built array. Unknown fields of
 * either side are kept.
 */
export function mergeRecord(built: Json, next: Json): Json {
  const merged: Json = { ...built };
  // Own keys only, and a `__proto__` key set as a field (see setOwn): the server's keys are data. A `for...in`,
  // not Object.entries: no array per key (every `.done` item and part comes through here).
  for (const key in next) {
    if (!Object.hasOwn(next, key)) continue;
    const value = next[key];
    const prev = getOwn(built, key);
    const erases =
      value === undefined ||
      value === null ||
      value === '' ||
      (Array.isArray(value) && Array.isArray(prev) && value.length < prev.length);
    if (erases && prev !== undefined && prev !== null && prev !== '') continue;
    setOwn(merged, key, Array.isArray(value) ? value.map(copyPart) : value);
  }
  return merged;
}

/**
 * Whether a record is an output item the listener can build on: the fields it reads have their types (a message's
 * `content` and a reasoning item's `summary` are lists of objects, a call's strings are strings). Items of types
 * this version does not know (new built-in tools) are kept as they come.
 */
export function isOutputItem(value: Json): value is OutputItem {
  switch (value.type) {
    case 'message':
      return Array.isArray(value.content) && value.content.every(isRecord);
    case 'reasoning':
      return (
        Array.isArray(value.summary) &&
        value.summary.every(isRecord) &&
        (value.content === undefined || (Array.isArray(value.content) && value.content.every(isRecord)))
      );
    case 'function_call':
      return typeof value.call_id === 'string' && typeof value.name === 'string' && typeof value.arguments === 'string';
    case 'custom_tool_call':
      return typeof value.call_id === 'string' && typeof value.name === 'string' && typeof value.input === 'string';
    default:
      return typeof value.type === 'string';
  }
}

/** Whether a record is a message content part the listener can build on (its text field is a string). */
export function isMessagePart(value: Json): value is MessageContentPart {
  if (value.type === 'refusal') return typeof value.refusal === 'string';
  return value.type === 'output_text' && typeof value.text === 'string' && Array.isArray(value.annotations);
}

/** Whether a record is a reasoning summary part. */
export function isSummaryPart(value: Json): value is ReasoningSummaryPart {
  return value.type === 'summary_text' && typeof value.text === 'string';
}

/** Whether a record is a raw reasoning text part. */
export function isReasoningTextPart(value: Json): value is ReasoningTextPart {
  return value.type === 'reasoning_text' && typeof value.text === 'string';
}

/** The item types the listener builds when a stream skipped their `output_item.added`. */
export type PlaceholderType = 'message' | 'reasoning' | 'function_call' | 'custom_tool_call';

/** An empty item of `type`, for events whose `output_item.added` never came (so nothing they carry is lost). */
export function placeholder(type: PlaceholderType, id: string): OutputItem {
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
      return assertNever(type);
  }
}

/** All answer text of some output items: every `output_text` part of every message, in order. */
export function outputTextOf(output: readonly OutputItem[]): string {
  let text = '';
  for (const item of output) {
    if (item.type !== 'message') continue;
    for (const part of item.content) if (part.type === 'output_text') text += part.text;
  }
  return text;
}
