/**
 * The Responses pipeline: SSE bytes to the final response, for ai4ts (`collectResponse`), openai-node
 * (`client.responses.stream().finalResponse()`) and the floor (streaming decode + blank-line split + JSON.parse of
 * every event + concatenation of text, summaries and arguments), on every stream shape of bench/input.ts, plus
 * linearity checks on argument deltas and on output items at hostile indexes.
 *
 * Run alone: `npx tsx bench/responses.bench.ts` (or through `npm run bench`).
 */
import { collectResponse } from '@ai4ts/responses';
import OpenAI from 'openai';
import { aiSdkFinal, aiSdkModel } from './ai-sdk.ts';
import { check, compare, cut, type Digest, FloorSplitter, floorRead, print, prng, renderResponses, type Shape, shapes, streamOf, pipelineRow, expect, linearity } from './input.ts';

type Json = Record<string, unknown>;

/** Writes events the way the API does (`event:` line, JSON `data:` line, blank line), numbering them. */
class Writer {
  readonly blocks: string[] = [];
  size = 0;
  #seq = 0;
  add(type: string, fields: Json): void {
    const block = `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.#seq++, ...fields })}\n\n`;
    this.blocks.push(block);
    this.size += block.length;
  }
}

const RESPONSE = { id: 'resp_bench', object: 'response', created_at: 1_741_476_542, model: 'gpt-bench', error: null, incomplete_details: null, usage: null };

interface FloorEvent {
  type: string;
  output_index: number;
  delta?: string;
}

/** The floor: what any reader must do at least. */
export async function floor(source: ReadableStream<Uint8Array>, separator: string): Promise<Digest> {
  let text = '';
  let reasoning = '';
  const args: string[] = [];
  const splitter = new FloorSplitter(separator, (data) => {
    const event = JSON.parse(data) as FloorEvent;
    if (event.type === 'response.output_text.delta') text += event.delta;
    else if (event.type === 'response.reasoning_summary_text.delta') reasoning += event.delta;
    else if (event.type === 'response.function_call_arguments.delta') args[event.output_index] = (args[event.output_index] ?? '') + event.delta;
  });
  await floorRead(source, splitter);
  return { text, reasoning, args: args.filter((a) => a !== undefined) };
}

function openaiClient(pieces: () => Uint8Array[]): OpenAI {
  return new OpenAI({
    apiKey: 'x',
    baseURL: 'http://bench.invalid/v1',
    fetch: async () => new Response(streamOf(pieces()), { headers: { 'content-type': 'text/event-stream' } }),
  });
}

function openaiFinal(client: OpenAI) {
  return client.responses.stream({ model: 'gpt-bench', input: 'go' }).finalResponse();
}

/** One function call whose arguments arrive in `n` deltas, in 1-4 KB chunks. */
function oneCallIn(n: number): Uint8Array[] {
  const w = new Writer();
  w.add('response.created', { response: { ...RESPONSE, status: 'in_progress', output: [] } });
  w.add('response.output_item.added', { output_index: 0, item: { id: 'fc_1', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_1', name: 'f' } });
  w.add('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: '{"s":"' });
  for (let i = 0; i < n; i++) w.add('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: 'ab' });
  w.add('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: '"}' });
  w.add('response.completed', { response: { ...RESPONSE, status: 'completed', output: [] } });
  return cut(new TextEncoder().encode(w.blocks.join('')), 1024, 4096, prng(7));
}

/**
 * `n` function calls at huge sparse `output_index`es in descending order (the worst a broken gateway can send),
 * their deltas addressed by `item_id` alone, in 1-4 KB chunks.
 */
function manyItemsIn(n: number): Uint8Array[] {
  const w = new Writer();
  w.add('response.created', { response: { ...RESPONSE, status: 'in_progress', output: [] } });
  for (let i = 0; i < n; i++) {
    const item = { id: `fc_${i}`, type: 'function_call', status: 'in_progress', arguments: '', call_id: `call_${i}`, name: 'f' };
    w.add('response.output_item.added', { output_index: 1e12 - i * 1000, item });
    w.add('response.function_call_arguments.delta', { item_id: `fc_${i}`, delta: '{}' });
  }
  w.add('response.completed', { response: { ...RESPONSE, status: 'completed', output: [] } });
  return cut(new TextEncoder().encode(w.blocks.join('')), 1024, 4096, prng(7));
}

interface OutputItem {
  type: string;
  arguments?: string;
  summary?: { text: string }[];
  content?: { type: string; text?: string }[];
}

function digestOf(output: readonly object[]): Digest {
  const items = output as OutputItem[];
  return {
    text: items.flatMap((item) => (item.type === 'message' ? (item.content ?? []).map((part) => part.text ?? '') : [])).join(''),
    reasoning: items.flatMap((item) => (item.type === 'reasoning' ? (item.summary ?? []).map((part) => part.text) : [])).join(''),
    args: items.filter((item) => item.type === 'function_call').map((item) => item.arguments ?? ''),
  };
}

/** One row of the table: the three readers checked against the script, then timed, interleaved. */
async function measure(shape: Shape): Promise<Record<string, string>> {
  const rendered = renderResponses(shape);
  const { pieces, separator } = rendered;
  const client = openaiClient(() => pieces);
  const aiSdk = aiSdkModel('responses', () => pieces);
  type Final = { output: readonly object[] };
  const result = await compare(
    [
      { name: 'floor', run: () => floor(streamOf(pieces), separator), check: (r) => check('floor', shape, r as Digest) },
      { name: 'ai4ts', run: () => collectResponse(streamOf(pieces)), check: (r) => check('ai4ts', shape, digestOf((r as Final).output)) },
      { name: 'openai-node', run: () => openaiFinal(client), check: (r) => check('openai-node', shape, digestOf((r as Final).output)) },
      { name: 'ai-sdk', run: () => aiSdkFinal(aiSdk), check: (r) => check('ai-sdk', shape, r as Digest) },
    ],
    { rounds: 3, time: 400, async: true },
  );
  return pipelineRow(rendered, result, ['openai-node', 'ai-sdk']);
}

export default async function run(): Promise<void> {
  const rows: Record<string, string>[] = [];
  for (const shape of shapes()) rows.push(await measure(shape));
  print({
    title: 'Responses: bytes to the final response (ms per stream, best median of 3 interleaved rounds)',
    columns: Object.keys(rows[0] ?? {}),
    rows,
    notes: ['Target (issue 12): ai4ts <= 1.25x the floor\'s time on every shape. Peers: openai-node (`responses.stream().finalResponse()`) and the Vercel AI SDK\'s OpenAI Responses model (`@ai-sdk/openai`, its `doStream` parts folded), each reading the in-memory body through its `fetch` option. `*`: slower than 1 s a run, timed as the best of 2 runs outside the rounds.'],
  });

  const collected = async (pieces: Uint8Array[]) => (await collectResponse(streamOf(pieces))).output as OutputItem[];
  await linearity('Responses', [
    {
      name: "one call's arguments in N deltas",
      input: oneCallIn,
      run: async (pieces, n) => expect('arguments', (await collected(pieces))[0]?.arguments?.length, 2 * n + 8),
    },
    {
      name: 'N output items (function calls) at sparse descending indexes',
      input: manyItemsIn,
      run: async (pieces, n) => expect('items', (await collected(pieces)).length, n),
    },
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
