/** The decoder tests' helpers: a whole decode, and the chunkings the conformance table runs. */
import { SseDecoder, type SseDecoderOptions, type SseEvent } from '@ai4ts/sse';
import { seededRandom, splitAt } from '@ai4ts/test-kit';

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

/** Random cuts of `input` into pieces of 1 to `max` units. */
export function randomSplit<T extends Uint8Array | string>(input: T, seed: number, max = 7): T[] {
  const random = seededRandom(seed);
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
