/**
 * The Messages pipeline: SSE bytes to the final message, for ai4ts (`collectMessage`), the official Anthropic SDK
 * (`client.messages.stream().finalMessage()`, its fetch answering from memory) and the floor (streaming decode +
 * blank-line split + JSON.parse of every event + concatenation of text, thinking and tool input), on every stream
 * shape of bench/input.ts; plus the linearity of the listener on hostile block indexes: `N` blocks at indexes from
 * 1e9 up, ascending and then descending (a late lower index each time), must take about 10x the time for 10x the
 * blocks.
 *
 * Run alone: `npx tsx bench/messages.bench.ts` (or through `npm run bench`).
 */
import Anthropic from '@anthropic-ai/sdk';
import { VERSION as ANTHROPIC_VERSION } from '@anthropic-ai/sdk/version';
import { collectMessage } from '@ai4ts/messages';
import { aiSdkFinal, aiSdkModel } from './ai-sdk.ts';
import { check, compare, cut, type Digest, FloorSplitter, floorRead, print, prng, renderMessages, type Shape, shapes, streamOf, pipelineRow, expect, linearity } from './input.ts';

interface FloorEvent {
  type: string;
  index: number;
  delta?: { type: string; text?: string; thinking?: string; partial_json?: string };
}

/** The floor: what any reader must do at least. */
export async function floor(source: ReadableStream<Uint8Array>, separator: string): Promise<Digest> {
  let text = '';
  let reasoning = '';
  const json: string[] = [];
  const splitter = new FloorSplitter(separator, (data) => {
    const event = JSON.parse(data) as FloorEvent;
    if (event.type !== 'content_block_delta' || !event.delta) return;
    const delta = event.delta;
    if (delta.type === 'text_delta') text += delta.text;
    else if (delta.type === 'thinking_delta') reasoning += delta.thinking;
    else if (delta.type === 'input_json_delta') json[event.index] = (json[event.index] ?? '') + delta.partial_json;
  });
  await floorRead(source, splitter);
  return { text, reasoning, args: json.filter((j) => j !== undefined) };
}

function anthropicClient(pieces: () => Uint8Array[]): Anthropic {
  return new Anthropic({
    apiKey: 'x',
    baseURL: 'http://bench.invalid',
    maxRetries: 0,
    fetch: async () => new Response(streamOf(pieces()), { headers: { 'content-type': 'text/event-stream' } }),
  });
}

function anthropicFinal(client: Anthropic) {
  return client.messages.stream({ model: 'claude-bench', max_tokens: 64_000, messages: [{ role: 'user', content: 'go' }] }).finalMessage();
}

interface Block {
  type: string;
  text?: string;
  thinking?: string;
  input?: unknown;
}

function digestOf(content: readonly object[]): Digest {
  const blocks = content as Block[];
  return {
    text: blocks.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join(''),
    reasoning: blocks.map((b) => (b.type === 'thinking' ? (b.thinking ?? '') : '')).join(''),
    args: blocks.filter((b) => b.type === 'tool_use').map((b) => JSON.stringify(b.input)),
  };
}

/** One row of the table: the three readers checked against the script, then timed, interleaved. */
async function measure(shape: Shape): Promise<Record<string, string>> {
  const rendered = renderMessages(shape);
  const { pieces, separator } = rendered;
  const client = anthropicClient(() => pieces);
  const aiSdk = aiSdkModel('messages', () => pieces);
  type Final = { content: readonly object[] };
  const result = await compare(
    [
      { name: 'floor', run: () => floor(streamOf(pieces), separator), check: (r) => check('floor', shape, r as Digest) },
      { name: 'ai4ts', run: () => collectMessage(streamOf(pieces)), check: (r) => check('ai4ts', shape, digestOf((r as Final).content)) },
      { name: 'anthropic-sdk', run: () => anthropicFinal(client), check: (r) => check('@anthropic-ai/sdk', shape, digestOf((r as Final).content)) },
      { name: 'ai-sdk', run: () => aiSdkFinal(aiSdk), check: (r) => check('ai-sdk', shape, r as Digest) },
    ],
    { rounds: 3, time: 400, async: true },
  );
  return pipelineRow(rendered, result, ['anthropic-sdk', 'ai-sdk'], { peer: 'anthropic-sdk', factor: 3 });
}

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

/** One tool_use block whose input arrives in `n` input_json_delta fragments, in 1-4 KB chunks. */
function oneInputIn(n: number): Uint8Array[] {
  const events: { type: string; [field: string]: unknown }[] = [START];
  events.push({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } });
  events.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"s":"' } });
  for (let i = 0; i < n; i++) events.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'ab' } });
  events.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"}' } });
  events.push({ type: 'content_block_stop', index: 0 });
  events.push({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: n } });
  events.push({ type: 'message_stop' });
  const text = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  return cut(new TextEncoder().encode(text), 1024, 4096, prng(7));
}

export default async function run(): Promise<void> {
  const rows: Record<string, string>[] = [];
  for (const shape of shapes()) rows.push(await measure(shape));
  print({
    title: 'Messages: bytes to the final message (ms per stream, best median of 3 interleaved rounds)',
    columns: Object.keys(rows[0] ?? {}),
    rows,
    notes: [
      "Targets (issue 12): ai4ts <= 1.25x the floor's time, and >= 3x faster than the official Anthropic SDK (@anthropic-ai/sdk " +
        `${ANTHROPIC_VERSION}), on every shape. The SDK reads the in-memory body through its \`fetch\` option, as does the Vercel AI SDK's Anthropic model (\`@ai-sdk/anthropic\`, its \`doStream\` parts folded). \`*\`: slower than 1 s a run, timed as the best of 2 runs outside the rounds.`,
      'anthropic-sdk / floor is what a reader exactly as fast as the floor would gain on the SDK: where it is below 3, the ">= 3x" target asks ai4ts to beat the floor itself.',
    ],
  });

  const blocks = async (pieces: Uint8Array[], n: number) => expect('blocks', (await collectMessage(streamOf(pieces))).content.length, n);
  await linearity('Messages', [
    { name: 'N content blocks (text and tool_use) at indexes from 1e9, ascending', input: (n) => blocksIn(n, 'ascending'), run: blocks },
    { name: 'N content blocks at indexes from 1e9, descending', input: (n) => blocksIn(n, 'descending'), run: blocks },
    {
      name: "one tool input in N input_json_delta fragments",
      input: oneInputIn,
      run: async (pieces, n) => {
        const [block] = (await collectMessage(streamOf(pieces))).content;
        expect('input', block?.type === 'tool_use' ? JSON.stringify(block.input).length : undefined, 2 * n + 8);
      },
    },
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
