/**
 * The chat pipeline: SSE bytes in 1-4 KB chunks to the final completion, for ai4ts, openai-node and a floor
 * (streaming decode + blank-line split + JSON.parse of every event + concatenation), plus three linearity checks.
 *
 * Run alone: `npx tsx bench/chat.bench.ts` (or through `npm run bench`).
 */
import { pathToFileURL } from 'node:url';
import { collectChatCompletion } from '@ai4ts/chat';
import OpenAI from 'openai';
import { Bench } from 'tinybench';
import { best, cut, prng, streamOf } from './input.ts';

const WORDS = ['the', 'stream', 'of', 'tokens', 'café', 'naïve', '東京', 'データ', 'Привет', '😀', 'résumé', 'λ', 'model', 'answer', '"quoted"', 'line\n'];
const BASE = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":';
const TAIL = ',"logprobs":null,"finish_reason":null}]}';

/** A realistic chat-completion SSE stream of at least `minBytes`: reasoning, content, fragmented parallel tool calls. */
function buildStream(minBytes: number, random: () => number): string {
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const events: string[] = [`data: ${BASE}{"role":"assistant","content":""}${TAIL}\n\n`];
  let size = 0;
  let callIndex = 0;
  const push = (delta: unknown) => {
    const line = `data: ${BASE}${JSON.stringify(delta)}${TAIL}\n\n`;
    events.push(line);
    size += line.length;
  };
  while (size < minBytes) {
    for (let i = 0; i < 40; i++) push({ reasoning_content: `${words(1 + Math.floor(random() * 5))} ` });
    for (let i = 0; i < 120; i++) push({ content: `${words(1 + Math.floor(random() * 6))} ` });
    // Two parallel calls, their argument fragments interleaved.
    const calls = [0, 1].map((k) => ({
      index: callIndex + k,
      args: JSON.stringify({ query: words(12), city: '東京', limit: Math.floor(random() * 100) }),
      at: 0,
    }));
    for (const call of calls) {
      push({ tool_calls: [{ index: call.index, id: `call_${call.index}`, type: 'function', function: { name: `tool_${call.index % 7}`, arguments: '' } }] });
    }
    while (calls.some((c) => c.at < c.args.length)) {
      for (const call of calls) {
        if (call.at >= call.args.length) continue;
        const piece = call.args.slice(call.at, call.at + 1 + Math.floor(random() * 8));
        call.at += piece.length;
        push({ tool_calls: [{ index: call.index, function: { arguments: piece } }] });
      }
    }
    callIndex += 2;
  }
  events.push(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}\n\n`);
  events.push('data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5000,"total_tokens":5100}}\n\n');
  events.push('data: [DONE]\n\n');
  return events.join('');
}

interface Delta {
  content?: string;
  reasoning_content?: string;
  tool_calls?: { index: number; function?: { arguments?: string } }[];
}

/** The floor: what any reader must do at least. */
async function floor(source: ReadableStream<Uint8Array>): Promise<number> {
  const decoder = new TextDecoder();
  let buffer = '';
  let content = '';
  let reasoning = '';
  const args: string[] = [];
  const reader = source.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    buffer += decoder.decode(read.value, { stream: true });
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n', start)) {
      const data = buffer.slice(start + 6, end);
      start = end + 2;
      if (data === '[DONE]') break;
      const choice = (JSON.parse(data) as { choices: { delta: Delta }[] }).choices[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta.content) content += delta.content;
      if (delta.reasoning_content) reasoning += delta.reasoning_content;
      for (const call of delta.tool_calls ?? []) args[call.index] = (args[call.index] ?? '') + (call.function?.arguments ?? '');
    }
    buffer = buffer.slice(start);
  }
  return content.length + reasoning.length + args.length;
}

function openaiClient(pieces: () => Uint8Array[]): OpenAI {
  return new OpenAI({
    apiKey: 'x',
    baseURL: 'http://bench.invalid/v1',
    fetch: async () => new Response(streamOf(pieces()), { headers: { 'content-type': 'text/event-stream' } }),
  });
}

async function openaiFinal(client: OpenAI): Promise<unknown> {
  return client.chat.completions
    .stream({ model: 'gpt-bench', messages: [{ role: 'user', content: 'go' }] })
    .finalChatCompletion();
}

/** One content event whose bytes arrive in `n` chunks of 10 bytes. */
function oneEventIn(n: number): Uint8Array[] {
  const text = `data: ${BASE}{"content":"${'x'.repeat(n * 10)}"}${TAIL.replace('null}]', '"stop"}]')}\n\ndata: [DONE]\n\n`;
  const bytes = new TextEncoder().encode(text);
  return cut(bytes, Math.ceil(bytes.length / n), Math.ceil(bytes.length / n), () => 0);
}

/** One tool call whose arguments arrive in `n` fragments, in 1-4 KB chunks. */
function oneCallIn(n: number): Uint8Array[] {
  const parts = [`data: ${BASE}{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\\"s\\":\\""}}]}${TAIL}\n\n`];
  const fragment = `data: ${BASE}{"tool_calls":[{"index":0,"function":{"arguments":"ab"}}]}${TAIL}\n\n`;
  for (let i = 0; i < n; i++) parts.push(fragment);
  parts.push(`data: ${BASE}{"tool_calls":[{"index":0,"function":{"arguments":"\\"}"}}]}${TAIL}\n\n`);
  parts.push(`data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n`);
  return cut(new TextEncoder().encode(parts.join('')), 1024, 4096, prng(7));
}

/** `n` distinct tool calls, each whole in one chunk, in 1-4 KB chunks (a new call must not walk the earlier ones). */
function distinctCallsIn(n: number): Uint8Array[] {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(`data: ${BASE}{"tool_calls":[{"index":${i},"id":"call_${i}","type":"function","function":{"name":"f","arguments":"{}"}}]}${TAIL}\n\n`);
  }
  parts.push(`data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n`);
  return cut(new TextEncoder().encode(parts.join('')), 1024, 4096, prng(7));
}

const MB = 1024 * 1024;

export default async function run(): Promise<void> {
  const random = prng(42);
  const text = buildStream(5 * MB, random);
  const bytes = new TextEncoder().encode(text);
  const pieces = cut(bytes, 1024, 4096, random);
  const mb = bytes.length / MB;
  console.log(`chat: ${mb.toFixed(2)} MB of SSE in ${pieces.length} chunks of 1-4 KB`);

  // The three readers must agree before being timed.
  const ours = await collectChatCompletion(streamOf(pieces));
  const theirs = (await openaiFinal(openaiClient(() => pieces))) as { choices: { message: { content: string; tool_calls: unknown[] } }[] };
  if (ours.choices[0]?.message.content !== theirs.choices[0]?.message.content) throw new Error('ai4ts and openai-node disagree on the content');
  if (ours.choices[0]?.message.tool_calls?.length !== theirs.choices[0]?.message.tool_calls.length) throw new Error('ai4ts and openai-node disagree on the tool calls');

  const client = openaiClient(() => pieces);
  const bench = new Bench({ name: 'chat pipeline', time: 4000, warmupIterations: 2, iterations: 5 });
  bench
    .add('floor', () => floor(streamOf(pieces)))
    .add('ai4ts collectChatCompletion', () => collectChatCompletion(streamOf(pieces)))
    .add('openai-node stream().finalChatCompletion()', () => openaiFinal(client));
  await bench.run();

  const ms: Record<string, number> = {};
  const rows = bench.tasks.map((task) => {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
    ms[task.name] = result.latency.mean;
    return { task: task.name, 'ms/run': result.latency.mean.toFixed(1), 'MB/s': (mb / (result.latency.mean / 1000)).toFixed(1), samples: result.latency.samplesCount };
  });
  console.table(rows);
  const [f, a, o] = [ms.floor, ms['ai4ts collectChatCompletion'], ms['openai-node stream().finalChatCompletion()']] as number[];
  console.log(`ratios: ai4ts/floor = ${((a as number) / (f as number)).toFixed(2)}x (target <= 1.5x), openai/ai4ts = ${((o as number) / (a as number)).toFixed(2)}x (target ~2.6x)`);

  // Linearity: 10x the input should take about 10x the time.
  const small = oneEventIn(10_000);
  const large = oneEventIn(100_000);
  const eventRatio = (await best(3, () => collectChatCompletion(streamOf(large)))) / (await best(3, () => collectChatCompletion(streamOf(small))));
  const smallCall = oneCallIn(10_000);
  const largeCall = oneCallIn(100_000);
  const callRatio = (await best(3, () => collectChatCompletion(streamOf(largeCall)))) / (await best(3, () => collectChatCompletion(streamOf(smallCall))));
  const fewCalls = distinctCallsIn(10_000);
  const manyCalls = distinctCallsIn(100_000);
  const callsRatio = (await best(3, () => collectChatCompletion(streamOf(manyCalls)))) / (await best(3, () => collectChatCompletion(streamOf(fewCalls))));
  console.log(`linearity (100,000 vs 10,000; ~10x is linear): one event over N chunks ${eventRatio.toFixed(1)}x, one call in N argument fragments ${callRatio.toFixed(1)}x, N distinct tool calls ${callsRatio.toFixed(1)}x`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
