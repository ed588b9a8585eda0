/**
 * AWS's binary event-stream framing (`application/vnd.amazon.eventstream`, what Amazon Bedrock streams in): each
 * message is a 12-byte prelude (total length, headers length, the prelude's CRC32), the headers, the payload, and the
 * CRC32 of everything before it. All integers are big-endian.
 */
import { crc32 } from './crc32.js';

/** One header value, tagged with its wire type (the names @smithy/eventstream-codec uses). */
export type EventStreamHeaderValue =
  | { type: 'boolean'; value: boolean }
  | { type: 'byte' | 'short' | 'integer'; value: number }
  | { type: 'long'; value: bigint }
  | { type: 'binary'; value: Uint8Array }
  | { type: 'string'; value: string }
  | { type: 'timestamp'; value: Date }
  | { type: 'uuid'; value: string };

/** One decoded message: its headers by name (`:event-type`, `:message-type`, ...) and its payload bytes. */
export interface EventStreamMessage {
  headers: Record<string, EventStreamHeaderValue>;
  payload: Uint8Array;
}

/**
 * What went wrong:
 * - `prelude_crc_mismatch` / `message_crc_mismatch`: a checksum does not match; the bytes are corrupt.
 * - `malformed`: the lengths or a header do not fit the frame (or the frame is larger than `maxMessageSize`).
 * - `truncated`: the stream ended inside a message.
 */
export type EventStreamErrorCode = 'prelude_crc_mismatch' | 'message_crc_mismatch' | 'malformed' | 'truncated';

/** The typed error of {@link EventStreamDecoder}. The decoder is unusable after it. */
export class EventStreamError extends Error {
  override name = 'EventStreamError';
  readonly code: EventStreamErrorCode;
  /** The messages the failing `push` completed before the bad frame: nothing received is lost. */
  readonly partial: EventStreamMessage[];

  constructor(message: string, code: EventStreamErrorCode, partial: EventStreamMessage[] = []) {
    super(message);
    this.code = code;
    this.partial = partial;
  }
}

/** Options of {@link EventStreamDecoder}. */
export interface EventStreamDecoderOptions {
  /** Largest message accepted, in bytes (prelude and CRCs included). Default {@link DEFAULT_MAX_MESSAGE_SIZE}. */
  maxMessageSize?: number;
}

/** The default `maxMessageSize`: 16 MiB plus room for headers (AWS caps a payload at 16 MiB). */
export const DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024 + 128 * 1024;

const PRELUDE = 12;
/** The prelude and the trailing message CRC: the smallest message. */
const OVERHEAD = PRELUDE + 4;

/**
 * A push decoder of AWS event-stream messages. Feed it any slices of the stream; each call returns the messages the
 * slice completed. Call {@link EventStreamDecoder.end} at end of input: a message left unfinished is a `truncated`
 * error, never a silent skip.
 *
 * Linear: the slices of an unfinished message are kept as a list and copied once into the message when its last
 * byte arrives; a message inside one slice is read in place.
 */
export class EventStreamDecoder {
  readonly #maxMessageSize: number;
  readonly #utf8 = new TextDecoder('utf-8', { fatal: true });
  /** Slices of the unfinished message, in order. */
  #pending: Uint8Array[] = [];
  #pendingLength = 0;
  #failed = false;

  constructor(options: EventStreamDecoderOptions = {}) {
    this.#maxMessageSize = options.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE;
  }

  /** Decodes the messages `chunk` completes. Throws {@link EventStreamError} on a corrupt frame. */
  push(chunk: Uint8Array): EventStreamMessage[] {
    if (this.#failed) throw new EventStreamError('the event stream already failed', 'malformed');
    const out: EventStreamMessage[] = [];
    try {
      let at = 0;
      // Finish the message begun in earlier slices.
      if (this.#pendingLength > 0) {
        at = this.#fillPending(chunk, out);
        if (at < 0) return out;
      }
      // Whole messages inside this slice, read in place.
      while (chunk.length - at >= PRELUDE) {
        const total = this.#totalLength(chunk.subarray(at, at + PRELUDE));
        if (chunk.length - at < total) break;
        out.push(this.#decode(chunk.subarray(at, at + total)));
        at += total;
      }
      if (at < chunk.length) this.#keep(chunk.subarray(at));
      return out;
    } catch (error) {
      this.#failed = true;
      if (error instanceof EventStreamError) throw new EventStreamError(error.message, error.code, out);
      throw error;
    }
  }

  /**
   * Ends the stream (it completes no message: the returned array is empty, as the SSE decoder's `end` may not be).
   * Throws a `truncated` {@link EventStreamError} if a message was left unfinished.
   */
  end(): EventStreamMessage[] {
    const left = this.#pendingLength;
    this.#pending = [];
    this.#pendingLength = 0;
    if (left > 0 && !this.#failed) {
      this.#failed = true;
      throw new EventStreamError(`the event stream ended inside a message (${left} bytes left over)`, 'truncated');
    }
    return [];
  }

  /** Completes the pending message with the start of `chunk`; returns where the rest of `chunk` begins, or -1. */
  #fillPending(chunk: Uint8Array, out: EventStreamMessage[]): number {
    let at = 0;
    if (this.#pendingLength < PRELUDE) {
      // The prelude is at most 12 bytes: gathering it costs nothing.
      const take = Math.min(PRELUDE - this.#pendingLength, chunk.length);
      this.#keep(chunk.subarray(0, take));
      at = take;
      if (this.#pendingLength < PRELUDE) return -1;
      this.#pending = [this.#joined()];
    }
    const total = this.#totalLength(this.#pending[0] ?? new Uint8Array(0));
    const need = total - this.#pendingLength;
    if (chunk.length - at < need) {
      this.#keep(chunk.subarray(at));
      return -1;
    }
    this.#keep(chunk.subarray(at, at + need));
    const frame = this.#joined();
    this.#pending = [];
    this.#pendingLength = 0;
    out.push(this.#decode(frame));
    return at + need;
  }

  #keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#pending.push(bytes);
    this.#pendingLength += bytes.length;
  }

  /** The pending slices as one array: each byte is copied once. */
  #joined(): Uint8Array {
    if (this.#pending.length === 1 && this.#pending[0]) return this.#pending[0];
    const whole = new Uint8Array(this.#pendingLength);
    let at = 0;
    for (const part of this.#pending) {
      whole.set(part, at);
      at += part.length;
    }
    return whole;
  }

  /** Checks the prelude (12 bytes) and returns the message's total length. */
  #totalLength(prelude: Uint8Array): number {
    const view = viewOf(prelude);
    const total = view.getUint32(0);
    const headersLength = view.getUint32(4);
    if (view.getUint32(8) !== crc32(prelude.subarray(0, 8))) {
      throw new EventStreamError('the event-stream prelude CRC does not match', 'prelude_crc_mismatch');
    }
    if (total < OVERHEAD || total > this.#maxMessageSize || headersLength > total - OVERHEAD) {
      throw new EventStreamError(
        `an event-stream message declares ${total} bytes with ${headersLength} bytes of headers`,
        'malformed',
      );
    }
    return total;
  }

  /** Decodes one whole frame whose prelude was checked. */
  #decode(frame: Uint8Array): EventStreamMessage {
    const view = viewOf(frame);
    const end = frame.length - 4;
    if (view.getUint32(end) !== crc32(frame.subarray(0, end))) {
      throw new EventStreamError('the event-stream message CRC does not match', 'message_crc_mismatch');
    }
    const headersEnd = PRELUDE + view.getUint32(4);
    return { headers: this.#headers(frame, view, headersEnd), payload: frame.subarray(headersEnd, end) };
  }

  #headers(frame: Uint8Array, view: DataView, end: number): Record<string, EventStreamHeaderValue> {
    const headers: Record<string, EventStreamHeaderValue> = {};
    let at = PRELUDE;
    const need = (n: number): number => {
      if (at + n > end) throw new EventStreamError('an event-stream header runs past the headers', 'malformed');
      const from = at;
      at += n;
      return from;
    };
    while (at < end) {
      const nameLength = view.getUint8(need(1));
      const name = this.#text(frame.subarray(need(nameLength), at));
      // defineProperty: a header named `__proto__` is a header, not the object's prototype.
      Object.defineProperty(headers, name, {
        value: this.#value(frame, view, need),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return headers;
  }

  #value(frame: Uint8Array, view: DataView, need: (n: number) => number): EventStreamHeaderValue {
    const type = view.getUint8(need(1));
    switch (type) {
      case 0:
        return { type: 'boolean', value: true };
      case 1:
        return { type: 'boolean', value: false };
      case 2:
        return { type: 'byte', value: view.getInt8(need(1)) };
      case 3:
        return { type: 'short', value: view.getInt16(need(2)) };
      case 4:
        return { type: 'integer', value: view.getInt32(need(4)) };
      case 5:
        return { type: 'long', value: view.getBigInt64(need(8)) };
      case 6:
      case 7: {
        const length = view.getUint16(need(2));
        const from = need(length);
        const bytes = frame.subarray(from, from + length);
        return type === 6 ? { type: 'binary', value: bytes } : { type: 'string', value: this.#text(bytes) };
      }
      case 8:
        return { type: 'timestamp', value: new Date(Number(view.getBigInt64(need(8)))) };
      case 9: {
        const from = need(16);
        return { type: 'uuid', value: uuidOf(frame.subarray(from, from + 16)) };
      }
      default:
        throw new EventStreamError(`unknown event-stream header type ${type}`, 'malformed');
    }
  }

  #text(bytes: Uint8Array): string {
    try {
      return this.#utf8.decode(bytes);
    } catch {
      throw new EventStreamError('an event-stream header is not valid UTF-8', 'malformed');
    }
  }
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function uuidOf(bytes: Uint8Array): string {
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
