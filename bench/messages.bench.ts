/**
 * The Messages listener on hostile block indexes: linearity only (the pipeline itself is the SSE decoder's and the
 * listener's hot path, measured for chat and Responses). `N` blocks at indexes from 1e9 up, ascending and then
 * descending (a late lower index each time), must take about 10x the time for 10x the blocks.
 *
 * Run alone: `npx tsx bench/messages.bench.ts` (or through `npm run bench`).
 */
import { collectMessage } from '@ai4ts/messages';
import { best, cut, prng, streamOf } from './input.ts';

const START = { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-bench', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } };

/** `n` text and tool_use blocks at huge sparse indexes, in the given order, in 1-4 KB chunks. */
function blocksIn(n: number, order: 'ascending' | 'descending'): Uint8Array[] {
  const events: { type: string; [field: string]: unknown }[] = [START];
  for (let i = 0; i < n; i++) {
    const index = 1e9 + (order === 'ascending' ? i : n - i) * 1000;
    const tool = i % 2 === 1;
    const block = tool ? { type: 'tool_use', id: `toolu_${i}`, name: 'f', input: {} } : { type: 'text', text: '' };
    const delta = tool ? { type: 'input_json_delta', partial_json: '{"n":1}' } : { type: 'text_delta', text: 'word ' };
    events.push({ type: 'content_block_start', index, content_block: block });
    events.push({ type: 'content_block_delta', index, delta });
    events.push({ type: 'content_block_stop', index });
  }
  events.push({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: n } });
  events.push({ type: 'message_stop' });
  const text = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  return cut(new TextEncoder().encode(text), 1024, 4096, prng(7));
}

async function ratio(order: 'ascending' | 'descending'): Promise<number> {
  const small = blocksIn(10_000, order);
  const large = blocksIn(100_000, order);
  const message = await collectMessage(streamOf(large));
  if (message.content.length !== 100_000) throw new Error(`${order}: ${message.content.length} blocks`);
  return (await best(3, () => collectMessage(streamOf(large)))) / (await best(3, () => collectMessage(streamOf(small))));
}

export default async function run(): Promise<void> {
  const ascending = await ratio('ascending');
  const descending = await ratio('descending');
  console.log(
    `linearity (100,000 vs 10,000 blocks at indexes from 1e9; ~10x is linear): ascending ${ascending.toFixed(1)}x, descending ${descending.toFixed(1)}x`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
