import { encodeSse, SseDecoder, SseError, type SseEvent, type SseMessage } from '@ai4ts/sse';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitAt } from '@ai4ts/test-kit';
import { type Decoded, decodeAll } from './helpers.js';

const encoder = new TextEncoder();

/** Lines that exercise every rule: fields, comments, no-colon lines, odd spacing, NUL, BOMs, multi-byte text. */
const line = fc.oneof(
  fc.constantFrom('', 'data', 'data:', 'data: ', ':', ': comment', 'event: e', 'event:', 'id: 1', 'id', 'id: a\0b', 'retry: 10', 'retry: x', 'unknown: v', 'Data: x', '\uFEFF', 'data: \uFEFF'),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => `data: ${s}`),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.tuple(fc.constantFrom('data', 'event', 'id', 'retry'), fc.string({ unit: 'binary-ascii', maxLength: 6 })).map(([f, v]) => `${f}:${v}`),
);
const lineEnd = fc.constantFrom('\n', '\r', '\r\n');
/** A whole stream: lines with mixed line ends, an optional BOM, maybe cut short. */
const stream = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(line, lineEnd), { maxLength: 30 }), fc.string({ maxLength: 5 }))
  .map(([bom, lines, tail]) => (bom ? '\uFEFF' : '') + lines.map(([l, e]) => l + e).join('') + tail);
const cuts = fc.array(fc.nat({ max: 400 }), { maxLength: 40 });

describe('properties', () => {
  it('any split of any stream yields identical events, lastEventId, retry and incomplete', () => {
    fc.assert(
      fc.property(stream, cuts, (text, at) => {
        const bytes = encoder.encode(text);
        const whole = decodeAll([bytes]);
        expect(decodeAll(splitAt(bytes, at))).toStrictEqual(whole);
        expect(decodeAll(splitAt(text, at))).toStrictEqual(whole);
      }),
      { numRuns: 500 },
    );
  });

  it('any split of random bytes yields the same result as the whole', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), cuts, (bytes, at) => {
        expect(decodeAll(splitAt(bytes, at))).toStrictEqual(decodeAll([bytes]));
      }),
      { numRuns: 500 },
    );
  });

  it('slices of a few bytes (decoded without TextDecoder when ASCII) agree with the whole', () => {
    // Mostly ASCII, with multi-byte and invalid bytes among it, so that sequences are cut across the small slices.
    const byte = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 0x7f }) },
      { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
    );
    const prefix = encoder.encode('data: ');
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 300 }), fc.array(fc.nat({ max: 9 }), { maxLength: 60 }), (values, sizes) => {
        const bytes = Uint8Array.from([...prefix, ...values, 10, 10]);
        const chunks: Uint8Array[] = [];
        let at = 0;
        for (const size of sizes) {
          chunks.push(bytes.subarray(at, at + size));
          at += size;
        }
        chunks.push(bytes.subarray(at));
        expect(decodeAll(chunks)).toStrictEqual(decodeAll([bytes]));
      }),
      { numRuns: 1000 },
    );
  });

  it('random bytes never throw with the default limit', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), cuts, (bytes, at) => {
        decodeAll(splitAt(bytes, at));
      }),
      { numRuns: 300 },
    );
  });

  it('with a small limit, random input throws only SseError event_too_large, and every split agrees', () => {
    const outcome = (chunks: Uint8Array[]): { events: SseEvent[]; error?: string } => {
      const decoder = new SseDecoder({ maxEventSize: 16 });
      const events: SseEvent[] = [];
      try {
        for (const chunk of chunks) events.push(...decoder.push(chunk));
        events.push(...decoder.end());
        return { events };
      } catch (error) {
        if (!(error instanceof SseError)) throw error;
        return { events: [...events, ...(error.partial ?? [])], error: error.code };
      }
    };
    fc.assert(
      fc.property(fc.oneof(stream.map((s) => encoder.encode(s)), fc.uint8Array({ maxLength: 300 })), cuts, (bytes, at) => {
        const whole = outcome([bytes]);
        if (whole.error !== undefined) expect(whole.error).toBe('event_too_large');
        expect(outcome(splitAt(bytes, at))).toStrictEqual(whole);
      }),
      { numRuns: 500 },
    );
  });

  it('encode then decode is the identity (CR and CRLF in data read as LF)', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 20 });
    const withBreaks = fc
      .array(fc.oneof(text, lineEnd), { maxLength: 8 })
      .map((parts) => parts.join(''));
    const singleLine = text.map((s) => s.replace(/[\r\n]/g, ''));
    const msg: fc.Arbitrary<SseMessage> = fc.record(
      {
        event: singleLine,
        data: withBreaks,
        id: singleLine.map((s) => s.replace(/\0/g, '')),
        retry: fc.nat(),
        comment: withBreaks,
      },
      { requiredKeys: ['data'] },
    );
    fc.assert(
      fc.property(fc.array(msg, { maxLength: 5 }), cuts, (messages, at) => {
        const bytes = encoder.encode(messages.map(encodeSse).join(''));
        const expected: SseEvent[] = messages.map((m) => ({
          event: m.event || 'message',
          data: m.data.replace(/\r\n|\r/g, '\n'),
          ...(m.id === undefined ? {} : { id: m.id }),
        }));
        const decoded: Decoded = decodeAll(splitAt(bytes, at));
        expect(decoded.events).toStrictEqual(expected);
        expect(decoded.incomplete).toBe(false);
        const lastRetry = messages.findLast((m) => m.retry !== undefined)?.retry;
        expect(decoded.retry).toBe(lastRetry);
      }),
      { numRuns: 400 },
    );
  });
});
