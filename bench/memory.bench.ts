/**
 * Memory: what collecting a long stream holds. A 200 MB chat stream (`AI4TS_MEMORY_MB` to change it) is generated
 * on the fly (never held whole) and collected with `collectChatCompletion`; the process's RSS is sampled at every
 * piece the source hands out and once more after the collector returned. The figure is the peak above the RSS of
 * a collected heap before the run, against the final completion's size (its text, one byte per character: ASCII).
 * The same for a Responses stream with `collectResponse`, whose listener keeps no event trace unless asked
 * (`new ResponsesStreamListener({ trace: true })`).
 *
 * Run through `npm run bench -- memory`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { collectChatCompletion } from '@ai4ts/chat';
import { collectResponse } from '@ai4ts/responses';
import { print } from './input.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;
const DELTA = 1000;
/** Events per piece the source hands out (about 60 KB). */
const PER_PIECE = 50;

/** A delta of `DELTA` ASCII characters that differs from event to event. */
function deltaOf(n: number): string {
  const head = `${n} `;
  return head + 'abcdefghij'.repeat(DELTA / 10).slice(head.length);
}

/** `events` SSE events rendered by `render`, handed out `PER_PIECE` at a time, sampling RSS at each. */
async function* generated(events: number, render: (n: number) => string, peak: { rss: number }): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  for (let n = 0; n < events; n += PER_PIECE) {
    let text = '';
    for (let k = n; k < Math.min(events, n + PER_PIECE); k++) text += render(k);
    peak.rss = Math.max(peak.rss, process.memoryUsage.rss());
    yield encoder.encode(text);
  }
}

interface Case {
  name: string;
  /** The events of the stream, then its ending. */
  event: (n: number) => string;
  end: (events: number) => string;
  collect: (source: AsyncIterable<Uint8Array>) => Promise<string>;
}

const CHUNK = (content: string) => `data: {"id":"chatcmpl-m","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;
const RESPONSE = '{"id":"resp_m","object":"response","created_at":0,"model":"m","status":"in_progress","output":[]}';

const cases: Case[] = [
  {
    name: 'chat (collectChatCompletion)',
    event: (n) => CHUNK(deltaOf(n)),
    end: () => 'data: {"id":"chatcmpl-m","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    collect: async (source) => (await collectChatCompletion(source)).choices[0]?.message.content ?? '',
  },
  {
    name: 'Responses (collectResponse)',
    event: (n) =>
      n === 0
        ? `event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":${RESPONSE}}\n\n` +
          'event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_m","type":"message","status":"in_progress","role":"assistant","content":[]}}\n\n' +
          'event: response.content_part.added\ndata: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_m","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}\n\n'
        : `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${n + 2},"item_id":"msg_m","output_index":0,"content_index":0,"delta":"${deltaOf(n)}"}\n\n`,
    end: (events) =>
      `event: response.completed\ndata: {"type":"response.completed","sequence_number":${events + 3},"response":${RESPONSE.replace('in_progress', 'completed')}}\n\n`,
    collect: async (source) => {
      const response = await collectResponse(source);
      const [item] = response.output;
      return item?.type === 'message' ? item.content.map((part) => ('text' in part ? part.text : '')).join('') : '';
    },
  },
];

export default async function run(): Promise<void> {
  const megabytes = Number(process.env.AI4TS_MEMORY_MB ?? 200);
  const rows: Record<string, string>[] = [];
  for (const c of cases) {
    const events = Math.ceil((megabytes * MB) / c.event(1).length);
    gc();
    gc();
    const baseline = process.memoryUsage.rss();
    const peak = { rss: baseline };
    const ending = c.end(events);
    async function* source(): AsyncGenerator<Uint8Array> {
      yield* generated(events, c.event, peak);
      yield new TextEncoder().encode(ending);
    }
    const text = await c.collect(source());
    peak.rss = Math.max(peak.rss, process.memoryUsage.rss());
    const size = text.length;
    if (size < (events - 1) * (DELTA - 10)) throw new Error(`${c.name}: ${size} characters collected`);
    const above = peak.rss - baseline;
    rows.push({
      pipeline: c.name,
      'stream MB': ((events * c.event(1).length) / MB).toFixed(0),
      'completion MB': (size / MB).toFixed(1),
      'peak RSS above baseline MB': (above / MB).toFixed(1),
      'peak / completion (<= 2)': `${(above / size).toFixed(2)}x`,
      target: above / size <= 2 ? 'met' : '**MISSED**',
    });
    gc();
  }
  print({
    title: `Memory: a ${megabytes} MB stream collected (RSS sampled at every ~60 KB piece)`,
    columns: Object.keys(rows[0] ?? {}),
    rows,
    notes: [
      "Target (issue 12): the peak above the baseline <= 2x the final completion's size. The text is ASCII, so its size is its length; the baseline is the RSS after two full GCs, before the run.",
    ],
  });
}
