/**
 * The four protocols as the fault suite and the fuzz suite see them: how to call each through the front door, how
 * to read the text out of its events and its `partial`, the shape of its in-stream error frame, and its streams as
 * the scripted model (@ai4ts/testing, proven against the official clients) sends them, recorded byte for byte.
 */
import { sseFrame } from '@ai4ts/test-kit';
import { startMockModel, type MockTurn } from '@ai4ts/testing';
import type { Ai4ts, RequestOptions, Tool, ToolLoopStream } from 'ai4ts';

export type ProtocolName = 'chat' | 'responses' | 'messages' | 'gemini';

/** What the suites need of a stream handle, whichever protocol made it. */
export interface AnyStream {
  final(): Promise<unknown>;
  abort(reason?: unknown): void;
  on(event: 'retry', handler: (event: { attempt: number; error: unknown; delayMs: number }) => void): unknown;
  on(event: 'content', handler: (event: { delta: string }) => void): unknown;
}

export interface Protocol {
  name: ProtocolName;
  /** The request body the scripted model is recorded with (and the client sends). */
  body: Record<string, unknown>;
  /** One plain non-streaming request through the front door. */
  create(client: Ai4ts, options?: RequestOptions): Promise<unknown>;
  /** One plain streamed request through the front door. */
  stream(client: Ai4ts, options?: RequestOptions): AnyStream;
  /** The tool loop, streamed, with `tools`. */
  loop(client: Ai4ts, tools: Tool[], options?: RequestOptions): ToolLoopStream<unknown, unknown, unknown>;
  /** The answer text in one event's JSON data ('' for any other event). */
  eventText(data: unknown): string;
  /** The answer text of a result or `partial`. */
  text(result: unknown): string | undefined;
  /** An in-stream error in this protocol's shape, as one SSE block. */
  errorFrame(code: string, message: string): string;
}

const prompt = [{ role: 'user' as const, content: 'Hi' }];
const contents = [{ role: 'user' as const, parts: [{ text: 'Hi' }] }];

export const PROTOCOLS: readonly Protocol[] = [
  {
    name: 'chat',
    body: { model: 'm', messages: prompt, stream: true, stream_options: { include_usage: true } },
    create: (client, options) => client.chat.create({ model: 'm', messages: prompt }, options),
    stream: (client, options) => client.chat.stream({ model: 'm', messages: prompt }, options),
    loop: (client, tools, options) => widen(client.chat.stream({ model: 'm', messages: prompt, tools }, options)),
    eventText: (data) => stringAt(data, 'choices', 0, 'delta', 'content'),
    text: (result) => stringAt(result, 'choices', 0, 'message', 'content'),
    errorFrame: (code, message) => sseFrame({ error: { message, type: code, code } }),
  },
  {
    name: 'responses',
    body: { model: 'm', input: 'Hi', stream: true },
    create: (client, options) => client.responses.create({ model: 'm', input: 'Hi' }, options),
    stream: (client, options) => client.responses.stream({ model: 'm', input: 'Hi' }, options),
    loop: (client, tools, options) => widen(client.responses.stream({ model: 'm', input: 'Hi', tools }, options)),
    eventText: (data) => (stringAt(data, 'type') === 'response.output_text.delta' ? stringAt(data, 'delta') : ''),
    text: (result) => stringAt(result, 'output_text'),
    errorFrame: (code, message) => sseFrame({ type: 'error', sequence_number: 999, code, message, param: null }, 'error'),
  },
  {
    name: 'messages',
    body: { model: 'm', max_tokens: 64, messages: prompt, stream: true },
    create: (client, options) => client.messages.create({ model: 'm', max_tokens: 64, messages: prompt }, options),
    stream: (client, options) => client.messages.stream({ model: 'm', max_tokens: 64, messages: prompt }, options),
    loop: (client, tools, options) =>
      widen(client.messages.stream({ model: 'm', max_tokens: 64, messages: prompt, tools }, options)),
    eventText: (data) => (stringAt(data, 'delta', 'type') === 'text_delta' ? stringAt(data, 'delta', 'text') : ''),
    text: (result) => {
      const content = valueAt(result, 'content');
      if (!Array.isArray(content)) return undefined;
      return content.map((block) => (stringAt(block, 'type') === 'text' ? stringAt(block, 'text') : '')).join('');
    },
    errorFrame: (code, message) => sseFrame({ type: 'error', error: { type: code, message } }, 'error'),
  },
  {
    name: 'gemini',
    // The model is in the URL (`models/m:streamGenerateContent?alt=sse`), never in the body.
    body: { contents },
    create: (client, options) => client.gemini.create({ model: 'm', contents }, options),
    stream: (client, options) => client.gemini.stream({ model: 'm', contents }, options),
    loop: (client, tools, options) => widen(client.gemini.stream({ model: 'm', contents, tools }, options)),
    eventText: (data) => answerText(valueAt(data, 'candidates', 0, 'content', 'parts')),
    text: (result) => {
      const parts = valueAt(result, 'candidates', 0, 'content', 'parts');
      return Array.isArray(parts) ? answerText(parts) : undefined;
    },
    // Google's error body, `status` naming the error and `code` the HTTP-like number it would have had.
    errorFrame: (code, message) =>
      sseFrame({ error: { code: /^\d+$/.test(code) ? Number(code) : code === 'invalid_request_error' ? 400 : 500, message, status: code } }),
  },
];

/** Gemini's answer text in a list of parts: the text parts that are not thoughts. */
function answerText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts.map((part) => (valueAt(part, 'thought') === true ? '' : stringAt(part, 'text'))).join('');
}

/** A loop handle of any protocol, seen through what the suites read of it. */
function widen<R, C, M>(stream: ToolLoopStream<R, C, M>): ToolLoopStream<unknown, unknown, unknown> {
  return stream as unknown as ToolLoopStream<unknown, unknown, unknown>;
}

function valueAt(value: unknown, ...path: (string | number)[]): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = Reflect.get(at, key);
  }
  return at;
}

function stringAt(value: unknown, ...path: (string | number)[]): string {
  const at = valueAt(value, ...path);
  return typeof at === 'string' ? at : '';
}

/** The turns recorded for every protocol: what the suites replay, cut and fragment. */
export const TURNS = {
  text: { reasoning: 'Thinking it over.', content: 'Héllo, wörld — the answer is 42. ✓' },
  tools: {
    content: 'Calling two tools.',
    toolCalls: [
      { name: 'lookup', arguments: { city: 'Zürich', days: [1, 2] } },
      { name: 'lookup', arguments: '{"city":"東京","note":"a \\"quoted\\" \\\\ path"}' },
    ],
  },
  length: { content: 'A long answer that was cut', finishReason: 'length' },
  failed: { content: 'Half an ans', streamError: { message: 'The server had an error', type: 'server_error', code: 'server_error' } },
} satisfies Record<string, MockTurn>;

export type TurnName = keyof typeof TURNS;

/** One recorded stream: its SSE blocks (each ends with its blank line), in order. */
export type Recording = readonly string[];

/**
 * Records `turn` as each protocol streams it (seeded, so a run replays), split into its SSE blocks.
 * Each block is a whole event with its terminating blank line.
 */
export async function record(turn: MockTurn, seed = 7): Promise<Record<ProtocolName, Recording>> {
  const model = await startMockModel({ script: () => turn, seed });
  try {
    const urls: Record<ProtocolName, string> = {
      chat: `${model.baseURL}/chat/completions`,
      responses: `${model.baseURL}/responses`,
      messages: `${model.baseURL}/messages`,
      gemini: `${model.geminiBaseURL}/models/m:streamGenerateContent?alt=sse`,
    };
    const out: Partial<Record<ProtocolName, Recording>> = {};
    for (const protocol of PROTOCOLS) {
      const response = await fetch(urls[protocol.name], {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(protocol.body),
      });
      out[protocol.name] = splitBlocks(await response.text());
    }
    return { chat: out.chat ?? [], responses: out.responses ?? [], messages: out.messages ?? [], gemini: out.gemini ?? [] };
  } finally {
    await model.close();
  }
}

/** SSE text as its blocks, each with its blank line. */
export function splitBlocks(sse: string): string[] {
  return sse.split(/(?<=\n\n)/).filter((block) => block.trim() !== '');
}

/** The JSON data of a block ('[DONE]' and non-JSON data give undefined). */
export function blockData(block: string): unknown {
  const data = block
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The answer text the first `count` blocks carry. */
export function textOf(protocol: Protocol, blocks: Recording, count = blocks.length): string {
  return blocks
    .slice(0, count)
    .map((block) => protocol.eventText(blockData(block)))
    .join('');
}
