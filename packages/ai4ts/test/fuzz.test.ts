/**
 * Fuzzing, one parametrized run per protocol: random chunkings (and line endings) of every recorded stream give
 * the result the whole stream gives; random bytes, random JSON and random protocol-shaped objects into each
 * listener give a result or a typed Ai4tsError, never a TypeError; tool-call arguments cut into random fragments
 * merge to exactly their concatenation.
 *
 * Budget: `AI4TS_FUZZ_RUNS` runs per property (default 30 in `npm test`; `npm run fuzz` sets thousands),
 * `AI4TS_FUZZ_SEED` replays a run fast-check reported.
 */
import { collectChatCompletion, ChatStreamListener } from '@ai4ts/chat';
import { Ai4tsError, type StreamSource } from '@ai4ts/core';
import { collectGemini, GeminiStreamListener } from '@ai4ts/gemini';
import { collectMessage, MessagesStreamListener } from '@ai4ts/messages';
import { collectResponse, ResponsesStreamListener } from '@ai4ts/responses';
import type { SseEvent } from '@ai4ts/sse';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { splitAt, sseText, streamOf } from '@ai4ts/test-kit';
import { helloStream, thinkingTextToolStream } from '../../messages/test/fixtures.js';
import { parallelCallsScript, textScript } from '../../responses/test/fixtures.js';
import { PROTOCOLS, type ProtocolName, record, TURNS, type TurnName } from './protocols.js';

const RUNS = Number(process.env.AI4TS_FUZZ_RUNS ?? 30);
const SEED = process.env.AI4TS_FUZZ_SEED === undefined ? undefined : Number(process.env.AI4TS_FUZZ_SEED);
const budget = { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }) };
/** A property of `RUNS` runs needs time in proportion. */
const timeout = Math.max(30_000, RUNS * 20);

/** What each protocol's fuzzing needs: its collector, a fresh listener, and the words of its wire format. */
interface Target {
  collect(source: StreamSource): Promise<unknown>;
  listener(): { pushSse(event: SseEvent): void; end(): unknown };
  /** Event types (Responses and Messages name their SSE events after them). */
  types: readonly string[];
  /** Field names of its events, at any depth. */
  keys: readonly string[];
  /** A stream of tool calls whose arguments arrive as the given fragments; `order` interleaves them where the protocol can. */
  toolStream(calls: readonly { id: string; fragments: readonly string[] }[], order: readonly number[]): string;
  /** The arguments each call ended with, by id, read from the collected result. */
  argumentsOf(result: unknown): Record<string, unknown>;
}

/** The ids of `calls` in the order their fragments are sent: `order` picks, from the calls with fragments left. */
function schedule(calls: readonly { id: string; fragments: readonly string[] }[], order: readonly number[]) {
  const left = calls.map((call) => [...call.fragments]);
  const out: { call: number; fragment: string }[] = [];
  let pick = 0;
  for (;;) {
    const open = left.flatMap((fragments, index) => (fragments.length ? [index] : []));
    if (!open.length) return out;
    const call = open[(order[pick++ % Math.max(order.length, 1)] ?? 0) % open.length] ?? 0;
    out.push({ call, fragment: left[call]?.shift() ?? '' });
  }
}

const TARGETS: Record<ProtocolName, Target> = {
  chat: {
    collect: (source) => collectChatCompletion(source),
    listener: () => new ChatStreamListener(),
    types: ['chat.completion.chunk'],
    keys: ['id', 'object', 'choices', 'index', 'delta', 'role', 'content', 'reasoning_content', 'tool_calls', 'function', 'name', 'arguments', 'type', 'finish_reason', 'usage', 'prompt_tokens', 'completion_tokens', 'error', 'message', 'refusal', 'logprobs'],
    toolStream(calls, order) {
      const chunk = (delta: unknown, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
      const events: unknown[] = [chunk({ role: 'assistant', content: '' })];
      calls.forEach((call, index) => {
        events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: 'f', arguments: '' } }] }));
      });
      for (const { call, fragment } of schedule(calls, order)) {
        events.push(chunk({ tool_calls: [{ index: call, function: { arguments: fragment } }] }));
      }
      return sseText([...events, chunk({}, 'tool_calls'), '[DONE]']);
    },
    argumentsOf(result) {
      const calls = Reflect.get(Reflect.get(Reflect.get(result as object, 'choices')[0], 'message'), 'tool_calls') as { id: string; function: { arguments: string } }[];
      return Object.fromEntries(calls.map((call) => [call.id, call.function.arguments]));
    },
  },
  responses: {
    collect: (source) => collectResponse(source),
    listener: () => new ResponsesStreamListener(),
    types: ['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_item.done', 'response.content_part.added', 'response.content_part.done', 'response.output_text.delta', 'response.output_text.done', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.reasoning_summary_text.delta', 'response.completed', 'response.incomplete', 'response.failed', 'error'],
    keys: ['type', 'sequence_number', 'response', 'id', 'object', 'status', 'output', 'item', 'item_id', 'output_index', 'content_index', 'summary_index', 'delta', 'text', 'arguments', 'call_id', 'name', 'part', 'content', 'usage', 'input_tokens', 'output_tokens', 'error', 'code', 'message', 'annotation'],
    toolStream(calls, order) {
      let seq = 0;
      const add = (type: string, fields: object) => ({ type, sequence_number: seq++, ...fields });
      const response = (status: string, output: unknown[]) => ({ id: 'r', object: 'response', status, model: 'm', output });
      const events: unknown[] = [add('response.created', { response: response('in_progress', []) })];
      calls.forEach((call, index) => {
        const item = { id: `fc_${index}`, type: 'function_call', status: 'in_progress', call_id: call.id, name: 'f', arguments: '' };
        events.push(add('response.output_item.added', { output_index: index, item }));
      });
      for (const { call, fragment } of schedule(calls, order)) {
        events.push(add('response.function_call_arguments.delta', { item_id: `fc_${call}`, output_index: call, delta: fragment }));
      }
      // No `.done` events and an empty final output: the arguments can only come from merging the deltas.
      return sseText([...events, add('response.completed', { response: response('completed', []) })], { named: true });
    },
    argumentsOf(result) {
      const output = Reflect.get(result as object, 'output') as { type: string; call_id: string; arguments: string }[];
      return Object.fromEntries(output.filter((item) => item.type === 'function_call').map((item) => [item.call_id, item.arguments]));
    },
  },
  messages: {
    collect: (source) => collectMessage(source),
    listener: () => new MessagesStreamListener(),
    types: ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'ping', 'error'],
    keys: ['type', 'message', 'id', 'role', 'model', 'content', 'index', 'content_block', 'delta', 'text', 'partial_json', 'thinking', 'signature', 'input', 'name', 'usage', 'input_tokens', 'output_tokens', 'stop_reason', 'error'],
    toolStream(calls) {
      // Messages streams one block after another: the order cannot interleave them.
      const events: unknown[] = [
        { type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } },
      ];
      calls.forEach((call, index) => {
        events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: 'f', input: {} } });
        for (const fragment of call.fragments) events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: fragment } });
        events.push({ type: 'content_block_stop', index });
      });
      events.push({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 2 } }, { type: 'message_stop' });
      return sseText(events, { named: true });
    },
    argumentsOf(result) {
      const content = Reflect.get(result as object, 'content') as { type: string; id: string; input: unknown }[];
      return Object.fromEntries(content.filter((block) => block.type === 'tool_use').map((block) => [block.id, block.input]));
    },
  },
  gemini: {
    collect: (source) => collectGemini(source),
    listener: () => new GeminiStreamListener(),
    // Gemini names no SSE event: every chunk is a whole GenerateContentResponse.
    types: ['message'],
    keys: ['candidates', 'content', 'role', 'parts', 'text', 'thought', 'thoughtSignature', 'functionCall', 'id', 'name', 'args', 'partialArgs', 'jsonPath', 'stringValue', 'numberValue', 'boolValue', 'nullValue', 'willContinue', 'finishReason', 'finishMessage', 'index', 'safetyRatings', 'citationMetadata', 'citationSources', 'usageMetadata', 'promptTokenCount', 'candidatesTokenCount', 'totalTokenCount', 'promptFeedback', 'blockReason', 'responseId', 'modelVersion', 'error', 'code', 'message', 'status'],
    toolStream(calls) {
      // Vertex AI streams a call's arguments as `partialArgs`, one call after another: a string continues in the
      // next fragment of its path while `willContinue` is true.
      const chunk = (parts: unknown[], finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason && { finishReason }) }], responseId: 'r' });
      const events: unknown[] = [];
      for (const call of calls) {
        events.push(chunk([{ functionCall: { id: call.id, name: 'f', willContinue: true } }]));
        for (const fragment of call.fragments) {
          events.push(chunk([{ functionCall: { partialArgs: [{ jsonPath: '$.text', stringValue: fragment, willContinue: true }], willContinue: true } }]));
        }
        events.push(chunk([{ functionCall: { willContinue: false } }]));
      }
      events.push(chunk([{ text: '' }], 'STOP'));
      return sseText(events);
    },
    argumentsOf(result) {
      const parts = Reflect.get(Reflect.get(Reflect.get(result as object, 'candidates')[0], 'content'), 'parts') as { functionCall?: { id: string; args: { text: string } } }[];
      return Object.fromEntries(parts.flatMap((part) => (part.functionCall ? [[part.functionCall.id, part.functionCall.args.text]] : [])));
    },
  },
};

/** What a collection came to, comparable across runs: the result, or the error's class, message and partial. */
async function outcome(collect: Promise<unknown>): Promise<unknown> {
  try {
    return { result: await collect };
  } catch (error) {
    expect(error).toBeInstanceOf(Ai4tsError);
    return error instanceof Ai4tsError ? { error: error.name, message: error.message, partial: error.partial } : { error };
  }
}

/** Runs `act`; anything it throws must be a typed Ai4tsError. */
function onlyTyped(act: () => void): void {
  try {
    act();
  } catch (error) {
    if (!(error instanceof Ai4tsError)) throw new Error(`Not an Ai4tsError: ${String(error)}`, { cause: error });
  }
}

/** Every recorded stream of the tests, as SSE text, by protocol. */
let corpus: Record<ProtocolName, { name: string; text: string }[]>;

beforeAll(async () => {
  corpus = { chat: [], responses: [], messages: [], gemini: [] };
  for (const name of Object.keys(TURNS) as TurnName[]) {
    const recorded = await record(TURNS[name]);
    for (const protocol of PROTOCOLS) corpus[protocol.name].push({ name: `scripted ${name}`, text: recorded[protocol.name].join('') });
  }
  corpus.messages.push({ name: 'helloStream', text: sseText(helloStream(), { named: true }) }, { name: 'thinkingTextToolStream', text: sseText(thinkingTextToolStream(), { named: true }) });
  corpus.responses.push({ name: 'parallelCallsScript', text: sseText(parallelCallsScript().events, { named: true }) }, { name: 'textScript', text: sseText(textScript().events, { named: true }) });
});

/** Arguments as providers stream them: JSON of any values, sometimes with every non-ASCII character escaped. */
const argumentsText = fc
  .tuple(fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }), fc.boolean())
  .map(([value, ascii]) => {
    const text = JSON.stringify(value);
    return ascii ? text.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
  });

/** A string cut at random code-unit offsets (a surrogate pair or an escape may be split). */
const fragmented = argumentsText.chain((text) =>
  fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 12 }).map((offsets) => {
    const cuts = offsets.filter((offset) => offset < text.length).sort((a, b) => a - b);
    return [0, ...cuts].map((from, i) => text.slice(from, cuts[i] ?? text.length));
  }),
);

describe.each(PROTOCOLS)('fuzz: $name', ({ name }) => {
  const target = TARGETS[name];

  it('every recorded stream, cut into random chunks with any line ending, gives what it gives whole', { timeout }, async () => {
    for (const { name: stream, text } of corpus[name]) {
      const endings = { lf: text, crlf: text.replaceAll('\n', '\r\n'), cr: text.replaceAll('\n', '\r') };
      const whole = await outcome(target.collect(text));
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('lf', 'crlf', 'cr') as fc.Arbitrary<keyof typeof endings>, fc.array(fc.nat(), { maxLength: 40 }), async (ending, offsets) => {
          const bytes = new TextEncoder().encode(endings[ending]);
          expect(await outcome(target.collect(streamOf(splitAt(bytes, offsets.map((offset) => offset % (bytes.length + 1)))))), stream).toEqual(whole);
        }),
        budget,
      );
    }
  });

  it('random bytes: a result or a typed error, never a TypeError', { timeout }, async () => {
    const prefix = fc.constantFrom('', 'data: ', `event: ${target.types[0]}\ndata: `);
    await fc.assert(
      fc.asyncProperty(prefix, fc.uint8Array({ maxLength: 512 }), async (head, bytes) => {
        const all = new Uint8Array([...new TextEncoder().encode(head), ...bytes]);
        await outcome(target.collect(streamOf([all])));
      }),
      budget,
    );
  });

  it('random JSON and random protocol-shaped events into the listener: only typed errors', { timeout }, () => {
    const keys = fc.constantFrom(...target.keys, '__proto__', 'constructor');
    const { value } = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), tie('object'), fc.array(tie('value'), { maxLength: 3 })),
      object: fc.dictionary(keys, tie('value'), { maxKeys: 6 }),
    }));
    const shaped = fc
      .tuple(fc.constantFrom(...target.types), fc.dictionary(keys, value, { maxKeys: 6 }))
      .map(([type, fields]) => JSON.stringify({ ...fields, type }));
    const data = fc.oneof(shaped, shaped, fc.jsonValue().map((json) => JSON.stringify(json)), fc.string());
    const event = fc.record({ event: fc.oneof(fc.constant('message'), fc.constantFrom(...target.types)), data });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 12 }), (events) => {
        const listener = target.listener();
        onlyTyped(() => {
          for (const sse of events) listener.pushSse(sse);
          listener.end();
        });
      }),
      budget,
    );
  });

  it('tool-call arguments in random fragments merge to exactly their concatenation', { timeout }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fragmented, { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 30 }), async (fragments, order) => {
        const calls = fragments.map((parts, i) => ({ id: `call_${i}`, fragments: parts }));
        const result = await target.collect(target.toolStream(calls, order));
        const expected = Object.fromEntries(
          calls.map((call) => [call.id, name === 'messages' ? JSON.parse(call.fragments.join('')) : call.fragments.join('')]),
        );
        expect(target.argumentsOf(result)).toEqual(expected);
      }),
      budget,
    );
  });
});
