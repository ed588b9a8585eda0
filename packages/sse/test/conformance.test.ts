import type { SseEvent } from '@ai4ts/sse';
import { describe, expect, it } from 'vitest';
import { chunkings, decodeAll } from './helpers.js';

interface Case {
  rule: string;
  input: string | Uint8Array;
  events: SseEvent[];
  lastEventId?: string;
  retry?: number;
  incomplete?: boolean;
}

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...new TextEncoder().encode(p)] : p)));
const message = (data: string, id?: string): SseEvent => (id === undefined ? { event: 'message', data } : { event: 'message', data, id });

/** The WHATWG HTML "Server-sent events" parsing rules, one row each (some rules have several rows). */
const table: Case[] = [
  { rule: 'a data line and a blank line dispatch a message', input: 'data: hello\n\n', events: [message('hello')] },
  { rule: 'several data lines join with LF', input: 'data: a\ndata: b\ndata: c\n\n', events: [message('a\nb\nc')] },
  { rule: 'CRLF ends lines', input: 'data: a\r\ndata: b\r\n\r\n', events: [message('a\nb')] },
  { rule: 'a lone CR ends lines', input: 'data: a\rdata: b\r\r', events: [message('a\nb')] },
  { rule: 'CR, LF and CRLF mix in one stream', input: 'data: a\r\n\rdata: b\n\r\ndata: c\r\n', events: [message('a'), message('b')], incomplete: true },
  { rule: 'CR then LF is one line end, LF then CR two', input: 'data: a\n\rdata: b\r\n\n', events: [message('a'), message('b')] },
  { rule: 'a CR that ends the input is a line end', input: 'data: a\r\r', events: [message('a')] },
  { rule: 'one leading BOM is removed', input: '\uFEFFdata: a\n\n', events: [message('a')] },
  { rule: 'a second BOM stays (and spoils the first field name)', input: '\uFEFF\uFEFFdata: a\n\ndata: b\n\n', events: [message('b')] },
  { rule: 'a BOM after the start is data', input: 'data: \uFEFFa\n\n', events: [message('\uFEFFa')] },
  { rule: 'comment lines are ignored', input: ': hi\ndata: a\n:\n:: x\n\n', events: [message('a')] },
  { rule: 'a comment-only block dispatches nothing', input: ': keep-alive\n\ndata: a\n\n', events: [message('a')] },
  { rule: 'a line with no colon is a field with an empty value', input: 'data\n\n', events: [message('')] },
  { rule: 'empty data lines keep their line breaks', input: 'data\ndata\n\n', events: [message('\n')] },
  { rule: 'one optional space after the colon is removed', input: 'data:a\n\ndata: a\n\ndata:  a\n\n', events: [message('a'), message('a'), message(' a')] },
  { rule: 'only the first colon separates', input: 'data: a: b:c\n\n', events: [message('a: b:c')] },
  { rule: 'a data line with only the space is empty', input: 'data: \n\n', events: [message('')] },
  { rule: 'unknown fields are ignored', input: 'foo: bar\ndata: a\nx\n\n', events: [message('a')] },
  { rule: 'field names are case-sensitive', input: 'DATA: a\nData: b\nEvent: x\nID: 1\ndata: c\n\n', events: [message('c')] },
  { rule: 'a space before the colon is part of the name', input: 'data : a\n\n', events: [] },
  { rule: 'event sets the type', input: 'event: add\ndata: 1\n\n', events: [{ event: 'add', data: '1' }] },
  { rule: 'the last event field wins', input: 'event: a\nevent: b\ndata: 1\n\n', events: [{ event: 'b', data: '1' }] },
  { rule: 'an empty event type is "message"', input: 'event:\ndata: 1\n\n', events: [message('1')] },
  { rule: 'the event type resets after a dispatch', input: 'event: add\ndata: 1\n\ndata: 2\n\n', events: [{ event: 'add', data: '1' }, message('2')] },
  { rule: 'the event type resets after a block with no data', input: 'event: x\n\ndata: 1\n\n', events: [message('1')] },
  { rule: 'a block with no data dispatches nothing', input: 'event: x\n\nid: 1\n\nretry: 5\n\n', events: [], lastEventId: '1', retry: 5 },
  { rule: 'blank lines alone dispatch nothing', input: '\n\n\r\n\r', events: [] },
  { rule: 'the empty stream has no events', input: '', events: [] },
  { rule: 'id belongs to its block and persists as lastEventId', input: 'id: 1\ndata: a\n\ndata: b\n\n', events: [message('a', '1'), message('b')], lastEventId: '1' },
  { rule: 'id may come after data in the block', input: 'data: a\nid: 7\n\n', events: [message('a', '7')], lastEventId: '7' },
  { rule: 'an id containing NUL is ignored', input: 'id: 1\n\nid: 2\0x\ndata: a\n\n', events: [message('a')], lastEventId: '1' },
  { rule: 'an empty id resets lastEventId', input: 'id: 1\ndata: a\n\nid\ndata: b\n\n', events: [message('a', '1'), message('b', '')], lastEventId: '' },
  { rule: 'retry sets the reconnection time', input: 'retry: 1500\ndata: a\n\n', events: [message('a')], retry: 1500 },
  { rule: 'retry needs ASCII digits only', input: 'retry: 1500\nretry: 15x\nretry: -1\nretry:\nretry: 1.5\nretry:  20\nretry: \u0661\n\n', events: [], retry: 1500 },
  { rule: 'NUL inside data is kept', input: 'data: a\0b\n\n', events: [message('a\0b')] },
  { rule: 'multi-byte UTF-8 decodes across any split', input: 'data: héllo 世界 😀\n\n', events: [message('héllo 世界 😀')] },
  { rule: 'invalid UTF-8 becomes U+FFFD', input: bytes('data: a', [0xff], 'b', [0xc3], '\n\n'), events: [message('a\uFFFDb\uFFFD')] },
  { rule: 'an overlong encoding becomes U+FFFD', input: bytes('data: ', [0xc0, 0xaf], '\n\n'), events: [message('\uFFFD\uFFFD')] },
  { rule: 'the unfinished last block is discarded', input: 'data: a\n\ndata: b\n', events: [message('a')], incomplete: true },
  { rule: 'an unfinished last line is discarded', input: 'data: a\n\ndata: b', events: [message('a')], incomplete: true },
  { rule: 'a truncated code point at EOF is discarded with its block', input: bytes('data: a\n\ndata: ', [0xe4, 0xb8]), events: [message('a')], incomplete: true },
  { rule: 'an id in a discarded block does not count', input: 'id: 1\ndata: a\n\nid: 2\ndata: b\n', events: [message('a', '1')], lastEventId: '1', incomplete: true },
  { rule: 'a trailing comment is not an unfinished event', input: 'data: a\n\n: bye\n', events: [message('a')] },
];

describe('WHATWG SSE parsing rules, over every chunking', () => {
  for (const row of table) {
    describe(row.rule, () => {
      for (const [name, chunks] of chunkings(row.input)) {
        it(name, () => {
          const decoded = decodeAll(chunks);
          expect(decoded.events).toStrictEqual(row.events);
          expect(decoded.lastEventId).toBe(row.lastEventId);
          expect(decoded.retry).toBe(row.retry);
          expect(decoded.incomplete).toBe(row.incomplete ?? false);
        });
      }
    });
  }
});
