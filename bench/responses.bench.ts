/**
 * The Responses pipeline: SSE bytes in 1-4 KB chunks to the final response, for ai4ts (`collectResponse`),
 * openai-node (`client.responses.stream().finalResponse()`) and a floor (streaming decode + blank-line split +
 * JSON.parse of every event + concatenation of text and arguments), plus linearity checks on argument deltas and on
 * output items at hostile indexes.
 *
 * Run alone: `npx tsx bench/responses.bench.ts` (or through `npm run bench`).
 */
import { collectResponse } from '@ai4ts/responses';
import OpenAI from 'openai';
import { Bench } from 'tinybench';
import { best, cut, prng, streamOf } from './input.ts';

const WORDS = ['the', 'stream', 'of', 'tokens', 'café', 'naïve', '東京', 'データ', 'Привет', '😀', 'résumé', 'λ', 'model', 'answer', '"quoted"', 'line\n'];

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

/**
 * A realistic Responses stream of at least `minBytes`: rounds of a reasoning summary, an answer with multi-byte
 * text, and two parallel function calls with interleaved argument deltas, each item with its `.done` events, and
 * a `response.completed` carrying the whole output (as the API sends it).
 */
function buildStream(minBytes: number, random: () => number): string {
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const w = new Writer();
  const output: Json[] = [];
  w.add('response.created', { response: { ...RESPONSE, status: 'in_progress', output: [] } });
  w.add('response.in_progress', { response: { ...RESPONSE, status: 'in_progress', output: [] } });
  while (w.size < minBytes) {
    // Reasoning summary.
    const rs = { id: `rs_${output.length}`, output_index: output.length };
    w.add('response.output_item.added', { output_index: rs.output_index, item: { id: rs.id, type: 'reasoning', summary: [] } });
    w.add('response.reasoning_summary_part.added', { item_id: rs.id, output_index: rs.output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    let summary = '';
    for (let i = 0; i < 40; i++) {
      const delta = `${words(1 + Math.floor(random() * 5))} `;
      summary += delta;
      w.add('response.reasoning_summary_text.delta', { item_id: rs.id, output_index: rs.output_index, summary_index: 0, delta, obfuscation: 'x9' });
    }
    w.add('response.reasoning_summary_text.done', { item_id: rs.id, output_index: rs.output_index, summary_index: 0, text: summary });
    w.add('response.reasoning_summary_part.done', { item_id: rs.id, output_index: rs.output_index, summary_index: 0, part: { type: 'summary_text', text: summary } });
    const reasoning = { id: rs.id, type: 'reasoning', summary: [{ type: 'summary_text', text: summary }] };
    w.add('response.output_item.done', { output_index: rs.output_index, item: reasoning });
    output.push(reasoning);

    // The answer.
    const msg = { item_id: `msg_${output.length}`, output_index: output.length, content_index: 0 };
    w.add('response.output_item.added', { output_index: msg.output_index, item: { id: msg.item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
    w.add('response.content_part.added', { ...msg, part: { type: 'output_text', text: '', annotations: [] } });
    let text = '';
    for (let i = 0; i < 120; i++) {
      const delta = `${words(1 + Math.floor(random() * 6))} `;
      text += delta;
      w.add('response.output_text.delta', { ...msg, delta, logprobs: [], obfuscation: 'Qm4' });
    }
    w.add('response.output_text.done', { ...msg, text, logprobs: [] });
    const part = { type: 'output_text', text, annotations: [] };
    w.add('response.content_part.done', { ...msg, part });
    const message = { id: msg.item_id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    w.add('response.output_item.done', { output_index: msg.output_index, item: message });
    output.push(message);

    // Two parallel calls, their argument deltas interleaved.
    const calls = [0, 1].map((k) => ({
      id: `fc_${output.length + k}`,
      call_id: `call_${output.length + k}`,
      name: `tool_${(output.length + k) % 7}`,
      output_index: output.length + k,
      args: JSON.stringify({ query: words(12), city: '東京', limit: Math.floor(random() * 100) }),
      at: 0,
    }));
    for (const c of calls) {
      w.add('response.output_item.added', { output_index: c.output_index, item: { id: c.id, type: 'function_call', status: 'in_progress', arguments: '', call_id: c.call_id, name: c.name } });
    }
    while (calls.some((c) => c.at < c.args.length)) {
      for (const c of calls) {
        if (c.at >= c.args.length) continue;
        const delta = c.args.slice(c.at, c.at + 1 + Math.floor(random() * 8));
        c.at += delta.length;
        w.add('response.function_call_arguments.delta', { item_id: c.id, output_index: c.output_index, delta, obfuscation: 'k2' });
      }
    }
    for (const c of calls) {
      w.add('response.function_call_arguments.done', { item_id: c.id, output_index: c.output_index, name: c.name, arguments: c.args });
      const item = { id: c.id, type: 'function_call', status: 'completed', arguments: c.args, call_id: c.call_id, name: c.name };
      w.add('response.output_item.done', { output_index: c.output_index, item });
      output.push(item);
    }
  }
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 50_000, output_tokens_details: { reasoning_tokens: 9000 }, total_tokens: 50_100 };
  w.add('response.completed', { response: { ...RESPONSE, status: 'completed', output, usage } });
  return w.blocks.join('');
}

interface FloorEvent {
  type: string;
  output_index: number;
  delta?: string;
}

/** The floor: what any reader must do at least. */
async function floor(source: ReadableStream<Uint8Array>): Promise<number> {
  const decoder = new TextDecoder();
  let buffer = '';
  let text = '';
  let summary = '';
  const args: string[] = [];
  const reader = source.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    buffer += decoder.decode(read.value, { stream: true });
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n', start)) {
      const data = buffer.indexOf('data: ', start);
      const event = JSON.parse(buffer.slice(data + 6, end)) as FloorEvent;
      start = end + 2;
      if (event.type === 'response.output_text.delta') text += event.delta;
      else if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
      else if (event.type === 'response.function_call_arguments.delta') args[event.output_index] = (args[event.output_index] ?? '') + event.delta;
    }
    buffer = buffer.slice(start);
  }
  return text.length + summary.length + args.length;
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

const MB = 1024 * 1024;

export default async function run(): Promise<void> {
  const random = prng(42);
  const text = buildStream(5 * MB, random);
  const bytes = new TextEncoder().encode(text);
  const pieces = cut(bytes, 1024, 4096, random);
  const mb = bytes.length / MB;
  console.log(`responses: ${mb.toFixed(2)} MB of SSE in ${pieces.length} chunks of 1-4 KB`);

  // The readers must agree before being timed.
  const ours = await collectResponse(streamOf(pieces));
  const client = openaiClient(() => pieces);
  const theirs = await openaiFinal(client);
  if (ours.output_text !== theirs.output_text) throw new Error('ai4ts and openai-node disagree on the text');
  // openai-node adds its parse fields (`parsed`, `parsed_arguments`): compare what both rebuild.
  const calls = (output: readonly object[]) =>
    (output as { type: string; call_id?: string; arguments?: string }[])
      .filter((item) => item.type === 'function_call')
      .map((item) => `${item.call_id}:${item.arguments}`)
      .join('\n');
  if (calls(ours.output) !== calls(theirs.output)) throw new Error('ai4ts and openai-node disagree on the function calls');

  const bench = new Bench({ name: 'responses pipeline', time: 4000, warmupIterations: 2, iterations: 5 });
  bench
    .add('floor', () => floor(streamOf(pieces)))
    .add('ai4ts collectResponse', () => collectResponse(streamOf(pieces)))
    .add('openai-node responses.stream().finalResponse()', () => openaiFinal(client));
  await bench.run();

  const ms: Record<string, number> = {};
  const rows = bench.tasks.map((task) => {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
    ms[task.name] = result.latency.mean;
    return { task: task.name, 'ms/run': result.latency.mean.toFixed(1), 'MB/s': (mb / (result.latency.mean / 1000)).toFixed(1), samples: result.latency.samplesCount };
  });
  console.table(rows);
  const f = ms.floor as number;
  const a = ms['ai4ts collectResponse'] as number;
  const o = ms['openai-node responses.stream().finalResponse()'] as number;
  console.log(`ratios: ai4ts/floor = ${(a / f).toFixed(2)}x (target <= 1.5x), openai/ai4ts = ${(o / a).toFixed(2)}x (target >= 3x)`);

  // Linearity: 10x the argument deltas should take about 10x the time.
  const small = oneCallIn(10_000);
  const large = oneCallIn(100_000);
  const ratio = (await best(3, () => collectResponse(streamOf(large)))) / (await best(3, () => collectResponse(streamOf(small))));
  const fewItems = manyItemsIn(10_000);
  const manyItems = manyItemsIn(100_000);
  const itemsRatio = (await best(3, () => collectResponse(streamOf(manyItems)))) / (await best(3, () => collectResponse(streamOf(fewItems))));
  console.log(
    `linearity (100,000 vs 10,000; ~10x is linear): function-call argument deltas ${ratio.toFixed(1)}x, output items at sparse descending indexes ${itemsRatio.toFixed(1)}x`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
