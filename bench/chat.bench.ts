/**
 * The chat pipeline: SSE bytes to the final completion, for ai4ts, openai-node and the floor (streaming decode +
 * blank-line split + JSON.parse of every event + concatenation), on every stream shape of bench/input.ts, plus
 * three linearity checks.
 *
 * Run alone: `npx tsx bench/chat.bench.ts` (or through `npm run bench`).
 */
import { pathToFileURL } from 'node:url';
import { collectChatCompletion } from '@ai4ts/chat';
import OpenAI from 'openai';
import { aiSdkFinal, aiSdkModel } from './ai-sdk.ts';
import { compare, type Digest, FloorSplitter, floorRead, print, prng, renderChat, type Shape, shapes, cut, streamOf, check, pipelineRow, linearity, expect } from './input.ts';

const BASE = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":';
const TAIL = ',"logprobs":null,"finish_reason":null}]}';

interface Delta {
  content?: string;
  reasoning_content?: string;
  tool_calls?: { index: number; function?: { arguments?: string } }[];
}

/** The floor: what any reader must do at least. */
export async function floor(source: ReadableStream<Uint8Array>, separator: string): Promise<Digest> {
  let text = '';
  let reasoning = '';
  const args: string[] = [];
  let done = false;
  const splitter = new FloorSplitter(separator, (data) => {
    if (done || data === '[DONE]') {
      done = true;
      return;
    }
    const choice = (JSON.parse(data) as { choices: { delta: Delta }[] }).choices[0];
    if (!choice) return;
    const delta = choice.delta;
    if (delta.content) text += delta.content;
    if (delta.reasoning_content) reasoning += delta.reasoning_content;
    if (delta.tool_calls) for (const call of delta.tool_calls) args[call.index] = (args[call.index] ?? '') + (call.function?.arguments ?? '');
  });
  await floorRead(source, splitter);
  return { text, reasoning, args };
}

function openaiClient(pieces: () => Uint8Array[]): OpenAI {
  return new OpenAI({
    apiKey: 'x',
    baseURL: 'http://bench.invalid/v1',
    fetch: async () => new Response(streamOf(pieces()), { headers: { 'content-type': 'text/event-stream' } }),
  });
}

async function openaiFinal(client: OpenAI) {
  return client.chat.completions.stream({ model: 'gpt-bench', messages: [{ role: 'user', content: 'go' }] }).finalChatCompletion();
}

interface FinalMessage {
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: { function: { arguments: string } }[];
}

function digestOf(message: FinalMessage | undefined, withReasoning: boolean): Partial<Digest> {
  return {
    text: message?.content ?? '',
    ...(withReasoning ? { reasoning: message?.reasoning_content ?? '' } : {}),
    args: (message?.tool_calls ?? []).map((call) => call.function.arguments),
  };
}

/** One row of the table: the three readers checked against the script, then timed, interleaved. */
async function measure(shape: Shape): Promise<Record<string, string>> {
  const rendered = renderChat(shape);
  const { pieces, separator } = rendered;
  const client = openaiClient(() => pieces);
  const aiSdk = aiSdkModel('chat', () => pieces);
  type Completion = { choices: { message: unknown }[] };
  const result = await compare(
    [
      { name: 'floor', run: () => floor(streamOf(pieces), separator), check: (r) => check('floor', shape, r as Digest) },
      {
        name: 'ai4ts',
        run: () => collectChatCompletion(streamOf(pieces)),
        check: (r) => check('ai4ts', shape, digestOf((r as Completion).choices[0]?.message as FinalMessage, true)),
      },
      // openai-node drops reasoning_content: its text and calls are checked.
      {
        name: 'openai-node',
        run: () => openaiFinal(client),
        check: (r) => check('openai-node', shape, digestOf((r as Completion).choices[0]?.message as FinalMessage, false)),
      },
      // The AI SDK's OpenAI chat model drops reasoning_content too.
      { name: 'ai-sdk', run: () => aiSdkFinal(aiSdk), check: (r) => check('ai-sdk', shape, { text: (r as Digest).text, args: (r as Digest).args }) },
    ],
    { rounds: 3, time: 400, async: true },
  );
  return pipelineRow(rendered, result, ['openai-node', 'ai-sdk']);
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

export default async function run(): Promise<void> {
  const rows: Record<string, string>[] = [];
  for (const shape of shapes()) rows.push(await measure(shape));
  print({
    title: 'Chat Completions: bytes to the final completion (ms per stream, best median of 3 interleaved rounds)',
    columns: Object.keys(rows[0] ?? {}),
    rows,
    notes: ['Target (issue 12): ai4ts <= 1.25x the floor\'s time on every shape. Peers: openai-node (`chat.completions.stream().finalChatCompletion()`) and the Vercel AI SDK\'s OpenAI chat model (`@ai-sdk/openai`, its `doStream` parts folded), each reading the in-memory body through its `fetch` option. `*`: slower than 1 s a run, timed as the best of 2 runs outside the rounds.'],
  });

  const collected = async (pieces: Uint8Array[]) => (await collectChatCompletion(streamOf(pieces))).choices[0]?.message;
  await linearity('Chat Completions', [
    {
      name: 'one content event over N chunks of equal size',
      input: oneEventIn,
      run: async (pieces, n) => expect('content', (await collected(pieces))?.content?.length, n * 10),
    },
    {
      name: "one call's arguments in N fragments",
      input: oneCallIn,
      run: async (pieces, n) => expect('arguments', (await collected(pieces))?.tool_calls?.[0]?.function.arguments.length, 2 * n + 8),
    },
    { name: 'N distinct tool calls', input: distinctCallsIn, run: async (pieces, n) => expect('calls', (await collected(pieces))?.tool_calls?.length, n) },
  ]);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
