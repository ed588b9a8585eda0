import { DEFAULT_MAX_EVENT_SIZE, SseDecoder, SseError } from '@ai4ts/sse';
import { describe, expect, it } from 'vitest';

describe('SseDecoder', () => {
  it('returns the events each slice completed, as they complete', () => {
    const decoder = new SseDecoder();
    expect(decoder.push('data: a\n')).toEqual([]);
    expect(decoder.push('\ndata: b\n\ndata: c')).toEqual([
      { event: 'message', data: 'a' },
      { event: 'message', data: 'b' },
    ]);
    expect(decoder.push('\n\n')).toEqual([{ event: 'message', data: 'c' }]);
    expect(decoder.end()).toEqual([]);
    expect(decoder.incomplete).toBe(false);
  });

  it('keeps the last-event-ID buffer across events, and exposes it before the block ends', () => {
    const decoder = new SseDecoder();
    decoder.push('id: 1\ndata: a\n\n');
    expect(decoder.lastEventId).toBe('1');
    decoder.push('id: 2\n');
    expect(decoder.lastEventId).toBe('2');
    expect(decoder.push('data: b\n\n')).toStrictEqual([{ event: 'message', data: 'b', id: '2' }]);
  });

  it('after end() starts a new stream (BOM stripped again) and keeps lastEventId and retry', () => {
    const decoder = new SseDecoder();
    decoder.push('\uFEFFid: 5\nretry: 20\ndata: a\n\ndata: cut');
    decoder.end();
    expect(decoder.incomplete).toBe(true);
    expect(decoder.push('\uFEFFdata: b\n\n')).toStrictEqual([{ event: 'message', data: 'b' }]);
    expect(decoder.incomplete).toBe(false);
    expect(decoder.lastEventId).toBe('5');
    expect(decoder.retry).toBe(20);
  });

  it('flushes a partial code point as U+FFFD when text follows bytes', () => {
    const decoder = new SseDecoder();
    decoder.push(new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0xe4, 0xb8]));
    expect(decoder.push('x\n\n')).toStrictEqual([{ event: 'message', data: '\uFFFDx' }]);
  });

  it('reads a code point cut into one-byte slices, and a cut one followed by small ASCII slices as U+FFFD', () => {
    const decoder = new SseDecoder();
    const slices = [...new TextEncoder().encode('data: 中\n\n')].map((byte) => Uint8Array.of(byte));
    expect(slices.flatMap((slice) => decoder.push(slice))).toStrictEqual([{ event: 'message', data: '中' }]);
    // 0xe4 0xb8 starts a three-byte sequence the ASCII byte after it cuts short: one U+FFFD, then the ASCII.
    const cut = [Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0xe4), Uint8Array.of(0xb8), Uint8Array.of(0x41, 10, 10)];
    expect(cut.flatMap((slice) => decoder.push(slice))).toStrictEqual([{ event: 'message', data: '\uFFFDA' }]);
  });

  it('defaults maxEventSize to 16 MiB', () => {
    expect(DEFAULT_MAX_EVENT_SIZE).toBe(16 * 1024 * 1024);
    const decoder = new SseDecoder();
    const data = 'x'.repeat(DEFAULT_MAX_EVENT_SIZE - 6);
    expect(decoder.push(`data: ${data}\n\n`)[0]?.data.length).toBe(data.length);
    expect(() => new SseDecoder().push(`data: ${data}x`)).toThrow(SseError);
  });
});

describe('maxEventSize', () => {
  const expectTooLarge = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(SseError);
      expect(error).toMatchObject({ name: 'SseError', code: 'event_too_large' });
      return;
    }
    expect.unreachable('expected SseError event_too_large');
  };

  it('an unfinished line throws on the slice that takes it past the limit, so at most one slice over is held', () => {
    const decoder = new SseDecoder({ maxEventSize: 1000 });
    const slice = 'x'.repeat(100);
    for (let i = 0; i < 10; i++) expect(decoder.push(slice)).toEqual([]); // 1000 code units held: at the limit
    expectTooLarge(() => decoder.push(slice));
    expectTooLarge(() => decoder.push('\n\n')); // it stays failed and holds nothing
    expectTooLarge(() => decoder.end());
  });

  it('counts every line of the block, not only the last', () => {
    const decoder = new SseDecoder({ maxEventSize: 100 });
    for (let i = 0; i < 9; i++) decoder.push('data: 12345\n'); // 9 lines of 11
    expectTooLarge(() => decoder.push('data: 12345\n'));
  });

  it('resets with each block: many small events pass', () => {
    const decoder = new SseDecoder({ maxEventSize: 20 });
    const events = decoder.push('data: 0123456789\n\n'.repeat(1000));
    expect(events).toHaveLength(1000);
  });

  it("keeps the events the failing slice completed before the oversized block in the error's partial", () => {
    const decoder = new SseDecoder({ maxEventSize: 20 });
    let error: unknown;
    try {
      decoder.push(`data: a\n\ndata: ${'x'.repeat(30)}\n\ndata: b\n\n`);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SseError);
    expect((error as SseError).partial).toStrictEqual([{ event: 'message', data: 'a' }]);
    expectTooLarge(() => decoder.push('data: c\n\n'));
  });

  it('comments count toward the block but keep-alives between blocks do not accumulate', () => {
    const decoder = new SseDecoder({ maxEventSize: 20 });
    for (let i = 0; i < 100; i++) decoder.push(': keep-alive\n\n');
    expect(decoder.push('data: ok\n\n')).toStrictEqual([{ event: 'message', data: 'ok' }]);
  });
});

describe('many slices', () => {
  it('one event over 100,000 slices decodes whole (its speed is measured by the bench)', () => {
    const decoder = new SseDecoder();
    let early = 0;
    decoder.push('data: ');
    for (let i = 0; i < 100_000; i++) early += decoder.push('abcdefgh').length;
    const [event] = decoder.push('\n\n');
    expect(early).toBe(0);
    expect(event?.data.length).toBe(800_000);
  });
});
