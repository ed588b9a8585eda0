/**
 * Streaming partial JSON: one object of N bytes arriving in N/10 deltas, a partial value after every delta that
 * changes it (what the stream's `object` events carry). ai4ts's `PartialJsonParser` reads each delta once and
 * takes each partial in O(depth), built when read; the peers, openai-node's vendored `partialParse` and
 * `partial-json` from npm, parse the whole text so far on every delta. Linearity is t(4N)/t(N): about 4 is linear,
 * 16 quadratic; the target (issue 14) is <= 5 for ai4ts.
 */
import { pathToFileURL } from 'node:url';
import { PartialJsonParser } from '@ai4ts/core';
import { partialParse } from 'openai/_vendor/partial-json-parser/parser';
import { parse as partialJson } from 'partial-json';
import { best, fmt, note, print, prng } from './input.ts';

/** A reader of a delta sequence: returns the last partial value. */
type Reader = (deltas: readonly string[]) => unknown;

/** ai4ts as the stream runs it: a partial taken after every change, the last one read. */
const ai4ts: Reader = (deltas) => {
  const parser = new PartialJsonParser();
  let partial = parser.partial();
  for (const delta of deltas) if (parser.push(delta)) partial = parser.partial();
  if (parser.end()) partial = parser.partial();
  return partial();
};

/** ai4ts with every partial read (built): each copies the open containers on the path to the change. */
const ai4tsReadAll: Reader = (deltas) => {
  const parser = new PartialJsonParser();
  let value: unknown;
  for (const delta of deltas) if (parser.push(delta)) value = parser.value;
  if (parser.end()) value = parser.value;
  return value;
};

/** A peer: the whole text so far parsed after every delta. */
const reparse =
  (parse: (text: string) => unknown): Reader =>
  (deltas) => {
    let text = '';
    let value: unknown;
    for (const delta of deltas) {
      text += delta;
      value = parse(text);
    }
    return value;
  };

/** The contenders, and the largest N each is run at (the peers are quadratic: minutes per run past it). */
const contenders: Record<string, { read: Reader; limit: number }> = {
  ai4ts: { read: ai4ts, limit: Number.POSITIVE_INFINITY },
  'ai4ts, every partial read': { read: ai4tsReadAll, limit: 320_000 },
  'openai-node partialParse': { read: reparse(partialParse), limit: 20_000 },
  'partial-json (npm)': { read: reparse(partialJson), limit: 20_000 },
};

/** The object shapes: how the N bytes are laid out. */
const SHAPES = {
  /** One array of records (~150 bytes each): the list an extraction returns. */
  records: (bytes: number, random: () => number) => {
    const items: unknown[] = [];
    let size = 0;
    for (let id = 0; size < bytes; id++) {
      const item = { id, name: words(random, 3), done: random() < 0.5, score: Math.round(random() * 1e4) / 100, tags: [words(random, 1), words(random, 1)], note: words(random, 8) };
      items.push(item);
      size += JSON.stringify(item).length + 1;
    }
    return { title: 'Report', items };
  },
  /** Sections of paragraphs, nested: no container wider than 16 entries. */
  tree: (bytes: number, random: () => number) => {
    const node = (budget: number): unknown => {
      if (budget < 400) return { text: words(random, Math.max(1, Math.round(budget / 7))), level: Math.round(random() * 3) };
      return { heading: words(random, 4), children: Array.from({ length: 16 }, () => node(budget / 16)) };
    };
    return node(bytes);
  },
};

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'zürich', 'naïve', '"quoted"', 'tab\there', 'emoji 🎉', 'line\nbreak', 'π≈3.14'];
function words(random: () => number, count: number): string {
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
}

/** The object's JSON text (pretty-printed, as models write it) in N/10 deltas of 1-19 characters. */
function deltasOf(shape: keyof typeof SHAPES, bytes: number): { text: string; deltas: string[] } {
  const random = prng(bytes);
  const text = JSON.stringify(SHAPES[shape](bytes, random), null, 1);
  const deltas: string[] = [];
  for (let at = 0; at < text.length; ) {
    const size = 1 + Math.floor(random() * 19);
    deltas.push(text.slice(at, at + size));
    at += size;
  }
  return { text, deltas };
}

const SIZES = [5_000, 20_000, 80_000, 320_000, 1_280_000];

export default async function run(): Promise<void> {
  for (const shape of Object.keys(SHAPES) as (keyof typeof SHAPES)[]) {
    const times = new Map<string, number[]>();
    for (const bytes of SIZES) {
      const { text, deltas } = deltasOf(shape, bytes);
      const expected = JSON.stringify(JSON.parse(text));
      for (const [name, { read, limit }] of Object.entries(contenders)) {
        if (bytes > limit) continue;
        const got = JSON.stringify(read(deltas));
        if (got !== expected) throw new Error(`${name} read the ${shape} object of ${bytes} bytes wrongly`);
        const runs = bytes > 100_000 || name.includes('npm') || name.includes('openai') ? 1 : 3;
        times.set(name, [...(times.get(name) ?? []), await best(runs, async () => read(deltas))]);
      }
    }
    const rows = Object.keys(contenders).map((name) => {
      const ms = times.get(name) ?? [];
      const row: Record<string, string> = { contender: name };
      SIZES.forEach((bytes, i) => {
        const at = ms[i];
        row[`${bytes / 1000} KB`] = at === undefined ? '–' : fmt(at);
      });
      row['t(4N)/t(N)'] = ms
        .slice(1)
        .map((t, i) => `${(t / (ms[i] ?? t)).toFixed(1)}x`)
        .join(', ');
      return row;
    });
    print({
      title: `Partial JSON, ${shape}: one object of N bytes in N/10 deltas, a partial after each change (ms, best of 1-3 runs)`,
      columns: Object.keys(rows[0] ?? {}),
      rows,
      notes: [
        'Target (issue 14): t(4N)/t(N) <= 5 for ai4ts (about 4 is linear, 16 quadratic). The peers re-parse the whole text on every delta; `–`: not run at that size (quadratic, minutes per run).',
      ],
    });
  }
  note(
    'Reading every partial costs the open containers on the path to each change: on `records` each partial is a new items array (O(items) per delta, quadratic for any immutable partial), on `tree` at most 16 entries per level. The stream takes a partial per change and builds it only when read.',
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
