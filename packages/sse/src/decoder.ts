import { SseError } from './errors.js';
import type { SseEvent } from './event.js';

/** Options of {@link SseDecoder}. */
export interface SseDecoderOptions {
  /**
   * Most UTF-16 code units one block may hold: its lines (field names included) up to the blank line that ends it,
   * plus a line still unfinished. Default {@link DEFAULT_MAX_EVENT_SIZE}.
   */
  maxEventSize?: number;
}

/** The default `maxEventSize`: 16 MiB. */
export const DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024;

const LF = 10;
const CR = 13;
const SPACE = 32;
const COLON = 58;
const ZERO = 48;
const NINE = 57;
const BOM = 0xfeff;
const D = 100;

/** Where a field's value starts: after the colon at `afterColon - 1`, one leading space skipped. */
function valueAt(s: string, afterColon: number, end: number): number {
  return afterColon < end && s.charCodeAt(afterColon) === SPACE ? afterColon + 1 : afterColon;
}

/** Most bytes {@link asciiOf} decodes itself. */
const SMALL_CHUNK = 8;

/**
 * The text of a slice of a few ASCII bytes, or '' (use TextDecoder). A call of TextDecoder costs ~120 ns whatever
 * the size, this loop ~10 ns a byte (Node 20): a socket that splits a line into a few bytes, or a reader handing
 * out one byte at a time, pays per slice, not per byte.
 */
function asciiOf(chunk: Uint8Array): string {
  if (chunk.length > SMALL_CHUNK) return '';
  let text = '';
  for (let i = 0; i < chunk.length; i++) {
    const byte = chunk[i] ?? 0;
    if (byte >= 0x80) return '';
    text += String.fromCharCode(byte);
  }
  return text;
}

/**
 * A push decoder for `text/event-stream`, exactly as the WHATWG HTML "Server-sent events" parsing rules say.
 *
 * Feed it any slices of the stream (bytes may end mid-code-point, a CR may end one slice and its LF open the next);
 * each call returns the events the slice completed. Call {@link SseDecoder.end} at end of input. After `end()` the
 * decoder is ready for a new stream (a reconnection): `lastEventId` and `retry` carry over, like an EventSource's.
 *
 * Fast path: line ends are found with `indexOf` in each new slice only, and an unfinished line is kept as one string,
 * so a block spread over many slices costs time linear in its size.
 */
export class SseDecoder {
  readonly #maxEventSize: number;
  // ignoreBOM: keep the BOM in the output, so exactly one is stripped below (TextDecoder would strip one more).
  readonly #utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The last bytes did not end on an ASCII byte: the UTF-8 decoder may hold part of a code point. */
  #midBytes = false;
  /** The first character of this stream was seen (and a BOM there removed). */
  #started = false;
  /** The last slice ended with CR: an LF opening the next one belongs to that line end. */
  #skipLF = false;
  /** The unfinished last line. */
  #tail = '';
  /** Code units of the current block's finished lines. */
  #blockSize = 0;
  /** The current block has a field line (comments do not count). */
  #inBlock = false;
  #data: string | undefined;
  #type = '';
  #blockId: string | undefined;
  #lastEventId: string | undefined;
  /** The last-event-ID at the last dispatch: what survives an unfinished block. */
  #dispatchedId: string | undefined;
  #retry: number | undefined;
  #incomplete = false;
  /** A block outgrew the limit: the decoder holds nothing and accepts nothing more. */
  #failed = false;

  constructor(options: SseDecoderOptions = {}) {
    this.#maxEventSize = options.maxEventSize ?? DEFAULT_MAX_EVENT_SIZE;
  }

  /** The spec's last-event-ID buffer: the last valid `id:` value, kept across events (`""` after an empty id). */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  /** The last valid `retry:` value (milliseconds), kept across events and streams. */
  get retry(): number | undefined {
    return this.#retry;
  }

  /** After `end()`: true when the input stopped inside a block, which was discarded and not dispatched. */
  get incomplete(): boolean {
    return this.#incomplete;
  }

  /**
   * Feeds one slice of the stream and returns the events it completed.
   * @throws SseError `event_too_large` when a block grows past `maxEventSize`; its `partial` holds the events this
   * slice completed before that block. The decoder then holds nothing, and every later call throws again.
   */
  push(chunk: Uint8Array | string): SseEvent[] {
    if (this.#failed) throw this.#tooLarge([]);
    this.#incomplete = false;
    let text: string;
    if (typeof chunk === 'string') {
      // Bytes left mid-code-point by a previous slice are invalid now: flush them as U+FFFD.
      text = this.#midBytes ? this.#utf8.decode() + chunk : chunk;
      this.#midBytes = false;
    } else {
      text = (!this.#midBytes && asciiOf(chunk)) || this.#utf8.decode(chunk, { stream: true });
      // After an ASCII byte the UTF-8 decoder holds nothing: any unfinished sequence before it was flushed as U+FFFD.
      if (chunk.length > 0) this.#midBytes = (chunk[chunk.length - 1] ?? 0) >= 0x80;
    }
    const events: SseEvent[] = [];
    this.#feed(text, events);
    return this.#settle(events);
  }

  /**
   * Ends the input and returns what completes at EOF (nothing, in practice: a CR that ends the input has already
   * ended its line). A block without its closing blank line is discarded (`incomplete` tells), and `lastEventId`
   * falls back to its value at the last dispatch.
   * @throws SseError `event_too_large`, as `push` does.
   */
  end(): SseEvent[] {
    if (this.#failed) throw this.#tooLarge([]);
    const events: SseEvent[] = [];
    if (this.#midBytes) this.#feed(this.#utf8.decode(), events);
    this.#midBytes = false;
    this.#incomplete = this.#inBlock || (this.#tail !== '' && this.#tail.charCodeAt(0) !== COLON);
    this.#lastEventId = this.#dispatchedId;
    this.#resetBlock();
    this.#tail = '';
    this.#started = false;
    this.#skipLF = false;
    return this.#settle(events);
  }

  #settle(events: SseEvent[]): SseEvent[] {
    if (this.#failed) throw this.#tooLarge(events);
    return events;
  }

  #tooLarge(partial: SseEvent[]): SseError {
    return new SseError(`An event block grew past maxEventSize (${this.#maxEventSize} code units)`, {
      code: 'event_too_large',
      partial,
    });
  }

  #feed(text: string, events: SseEvent[]): void {
    const length = text.length;
    if (length === 0) return;
    let pos = 0;
    if (!this.#started) {
      this.#started = true;
      if (text.charCodeAt(0) === BOM) pos = 1;
    }
    if (this.#skipLF) {
      this.#skipLF = false;
      if (text.charCodeAt(pos) === LF) pos++;
    }
    // Each search runs again only once passed, so a slice is scanned about once whatever its line count; a line end
    // right where a line starts (the blank line after every event) is seen without a search.
    let lf = -2;
    let cr = -2;
    for (;;) {
      let end = pos;
      const first = text.charCodeAt(pos);
      if (first !== LF && first !== CR) {
        if (lf !== -1 && lf < pos) lf = text.indexOf('\n', pos);
        if (cr !== -1 && cr < pos) cr = text.indexOf('\r', pos);
        if (lf === -1 && cr === -1) break;
        end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      }
      let next = end + 1;
      if (text.charCodeAt(end) === CR) {
        if (next === length) this.#skipLF = true;
        else if (text.charCodeAt(next) === LF) next++;
      }
      if (this.#tail === '') {
        this.#line(text, pos, end, events);
      } else {
        const line = this.#tail + text.slice(pos, end);
        this.#tail = '';
        this.#line(line, 0, line.length, events);
      }
      if (this.#failed) return;
      pos = next;
    }
    if (pos < length) {
      this.#tail += pos === 0 ? text : text.slice(pos);
      if (this.#blockSize + this.#tail.length > this.#maxEventSize) this.#fail();
    }
  }

  /** Processes the line `s[start, end)`. */
  #line(s: string, start: number, end: number, events: SseEvent[]): void {
    if (start === end) {
      this.#dispatch(events);
      return;
    }
    this.#blockSize += end - start;
    if (this.#blockSize > this.#maxEventSize) {
      this.#fail();
      return;
    }
    const first = s.charCodeAt(start);
    if (first === COLON) return;
    this.#inBlock = true;
    // `data:`, the line of every event, without a scan for the colon (V8 inlines a startsWith of a constant).
    const isData = first === D && s.startsWith('data:', start);
    if (isData) this.#appendData(s.slice(valueAt(s, start + 5, end), end));
    else this.#field(s, start, end);
  }

  /**
   * A line other than `data:`. Names are short, so the scan for the colon is too; one startsWith tells the name.
   * Its own method, so that #line, inlined in #feed, stays the size of the data path.
   */
  #field(s: string, start: number, end: number): void {
    let colon = start;
    while (colon < end && s.charCodeAt(colon) !== COLON) colon++;
    const value = s.slice(colon === end ? end : valueAt(s, colon + 1, end), end);
    switch (colon - start) {
      case 4:
        if (s.startsWith('data', start)) this.#appendData(value);
        return;
      case 5:
        if (s.startsWith('event', start)) this.#type = value;
        else if (s.startsWith('retry', start)) this.#setRetry(value);
        return;
      case 2:
        // The spec ignores an id holding NULL; any other (even empty) becomes the last-event-ID.
        if (s.startsWith('id', start) && !value.includes('\0')) this.#lastEventId = this.#blockId = value;
        return;
    }
  }

  #appendData(value: string): void {
    this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
  }

  /** Only ASCII digits make a retry value; anything else is ignored. */
  #setRetry(value: string): void {
    if (value === '') return;
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c < ZERO || c > NINE) return;
    }
    this.#retry = Number(value);
  }

  #dispatch(events: SseEvent[]): void {
    this.#dispatchedId = this.#lastEventId;
    if (this.#data !== undefined) {
      const event: SseEvent = { event: this.#type || 'message', data: this.#data };
      if (this.#blockId !== undefined) event.id = this.#blockId;
      events.push(event);
    }
    this.#resetBlock();
  }

  #resetBlock(): void {
    this.#data = undefined;
    this.#type = '';
    this.#blockId = undefined;
    this.#blockSize = 0;
    this.#inBlock = false;
  }

  #fail(): void {
    this.#failed = true;
    this.#resetBlock();
    this.#tail = '';
  }
}
