/**
 * @ai4ts/sse decoder against eventsource-parser 3 and the floor, on every stream shape of bench/input.ts (rendered as
 * chat-completion chunks: the decoder does not care which protocol it carries), plus a linearity check for one
 * event spread over many chunks.
 */
import { SseDecoder } from '@ai4ts/sse';
import { createParser } from 'eventsource-parser';
import { compare, expect, FloorSplitter, fmt, linearity, print, ratio, renderChat, shapes } from './input.ts';

/** Each contender counts events and data length, so every result is consumed the same way. */
interface Tally {
  events: number;
  chars: number;
}

function ai4ts(chunks: Uint8Array[]): Tally {
  const decoder = new SseDecoder();
  const tally = { events: 0, chars: 0 };
  const count = (events: { data: string }[]) => {
    for (const event of events) {
      tally.events++;
      tally.chars += event.data.length;
    }
  };
  for (const c of chunks) count(decoder.push(c));
  count(decoder.end());
  return tally;
}

function eventsourceParser(chunks: Uint8Array[]): Tally {
  const utf8 = new TextDecoder();
  const tally = { events: 0, chars: 0 };
  const parser = createParser({
    onEvent(event) {
      tally.events++;
      tally.chars += event.data.length;
    },
  });
  for (const c of chunks) parser.feed(utf8.decode(c, { stream: true }));
  parser.feed(utf8.decode());
  return tally;
}

/** The floor: streaming UTF-8 decoding and a split on the wire's blank line (see FloorSplitter). */
function floor(chunks: Uint8Array[], separator: string): Tally {
  const tally = { events: 0, chars: 0 };
  const splitter = new FloorSplitter(separator, (data) => {
    tally.events++;
    tally.chars += data.length;
  });
  for (const c of chunks) splitter.feed(c);
  return tally;
}

/** One event whose data arrives over `count` chunks of 8 bytes. */
function spread(count: number): Uint8Array[] {
  const piece = new TextEncoder().encode('abcdefgh');
  return [new TextEncoder().encode('data: '), ...Array.from({ length: count }, () => piece), new TextEncoder().encode('\n\n')];
}

function decodeOne(pieces: Uint8Array[], count: number): void {
  const decoder = new SseDecoder();
  const events = pieces.flatMap((piece) => decoder.push(piece));
  expect('data', events.length === 1 ? events[0]?.data.length : undefined, count * 8);
}

export default async function run(): Promise<void> {
  const rows: Record<string, string>[] = [];
  let sink = 0;
  for (const shape of shapes()) {
    const { pieces, bytes, separator, events } = renderChat(shape);
    const contenders = [
      { name: 'floor', run: () => floor(pieces, separator) },
      { name: '@ai4ts/sse', run: () => ai4ts(pieces) },
      { name: 'eventsource-parser', run: () => eventsourceParser(pieces) },
    ];
    for (const c of contenders) {
      const tally = c.run();
      if (tally.events !== events) throw new Error(`${shape.name}: ${c.name} saw ${tally.events} events, not ${events}`);
      const want = contenders[0]?.run().chars;
      if (tally.chars !== want) throw new Error(`${shape.name}: ${c.name} saw ${tally.chars} characters of data, not ${want}`);
    }
    const { ms } = await compare(
      contenders.map((c) => ({ name: c.name, run: () => { sink += c.run().chars; } })),
      { rounds: 3, time: 300, async: false },
    );
    const [f, a, p] = ['floor', '@ai4ts/sse', 'eventsource-parser'].map((n) => ms.get(n) as number) as [number, number, number];
    const misses = [a / f > 1.1 ? 'floor' : '', p / a < 1.05 ? 'parser' : ''].filter(Boolean);
    rows.push({
      shape: shape.name,
      MB: (bytes.length / 1e6).toFixed(2),
      events: String(events),
      chunks: String(pieces.length),
      'floor ms': fmt(f),
      'ai4ts ms': fmt(a),
      'eventsource-parser ms': fmt(p),
      'ai4ts / floor (<= 1.10)': ratio(a, f),
      'parser / floor': ratio(p, f),
      'ai4ts throughput / parser (>= 1.05)': ratio(p, a),
      target: misses.length === 0 ? 'met' : `**MISSED** (${misses.join(', ')})`,
    });
  }
  print({
    title: 'SSE decode: bytes to events (ms per stream, best median of 3 interleaved rounds)',
    columns: Object.keys(rows[0] ?? {}),
    rows,
    notes: ['Targets (issue 12): ai4ts <= 1.10x the floor\'s time, and >= 1.05x eventsource-parser\'s throughput, on every shape.'],
  });

  await linearity('SSE decode', [{ name: 'one event over N chunks of 8 bytes', input: spread, run: decodeOne }]);
  if (sink < 0) console.log(sink);
}
