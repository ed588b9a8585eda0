import { SseDecoder, type SseDecoderOptions, type SseEvent } from '@ai4ts/sse';

/** A small seeded PRNG (mulberry32), so random splits are reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a whole decode observed. */
export interface Decoded {
  events: SseEvent[];
  lastEventId: string | undefined;
  retry: number | undefined;
  incomplete: boolean;
}

/** Feeds `chunks` to a fresh decoder, then ends it. */
export function decodeAll(chunks: Iterable<Uint8Array | string>, options?: SseDecoderOptions): Decoded {
  const decoder = new SseDecoder(options);
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...decoder.push(chunk));
  events.push(...decoder.end());
  return { events, lastEventId: decoder.lastEventId, retry: decoder.retry, incomplete: decoder.incomplete };
}

/** Cuts `input` at the given positions (any order, duplicates allowed). */
export function splitAt<T extends Uint8Array | string>(input: T, cuts: number[]): T[] {
  const points = [...new Set(cuts.map((c) => Math.max(0, Math.min(input.length, c))))].sort((a, b) => a - b);
  const parts: T[] = [];
  let from = 0;
  for (const point of [...points, input.length]) {
    parts.push(input.slice(from, point) as T);
    from = point;
  }
  return parts;
}

/** Random cuts of `input` into pieces of 1 to `max` units. */
export function randomSplit<T extends Uint8Array | string>(input: T, seed: number, max = 7): T[] {
  const random = prng(seed);
  const cuts: number[] = [];
  for (let at = 1 + Math.floor(random() * max); at < input.length; at += 1 + Math.floor(random() * max)) cuts.push(at);
  return splitAt(input, cuts);
}

/** Every chunking the conformance table runs: whole, one byte at a time, random byte splits, and text splits. */
export function chunkings(input: string | Uint8Array): [string, (Uint8Array | string)[]][] {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const out: [string, (Uint8Array | string)[]][] = [
    ['whole bytes', [bytes]],
    ['one byte at a time', splitAt(bytes, [...bytes.keys()])],
  ];
  for (const seed of [1, 2, 3, 4]) out.push([`random byte splits #${seed}`, randomSplit(bytes, seed)]);
  if (typeof input === 'string') {
    out.push(['whole text', [input]]);
    out.push(['one code unit at a time', splitAt(input, [...Array(input.length).keys()])]);
    out.push(['random text splits', randomSplit(input, 5)]);
  }
  return out;
}
