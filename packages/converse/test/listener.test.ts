/**
 * The Converse listener over the recorded streams (fixtures/, from the Vercel AI SDK, Apache-2.0: see
 * fixtures/NOTICE) and over streams written here from AWS's ConverseStream documentation: the expected values are
 * read off the recordings, not off the listener.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ProtocolError, StreamIncompleteError } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';
import {
  type ConverseStreamOutput,
  ConverseStreamListener,
  collectConverse,
  toChatUsage,
  toFinishReason,
  toToolCalls,
} from '../src/index.js';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const NAMES = readdirSync(FIXTURES).filter((name) => name.endsWith('.chunks.txt'));

function events(name: string): ConverseStreamOutput[] {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ConverseStreamOutput);
}

/** A recording as the SSE the preset's framing gives: each event named by its type, its payload the data. */
function asSse(list: readonly ConverseStreamOutput[]): string {
  return list
    .map((event) => {
      const [type, payload] = Object.entries(event)[0] ?? [];
      return `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
    })
    .join('');
}

describe('recorded Converse streams', () => {
  it.each(NAMES)('%s: text, calls and stop reason as recorded, through named SSE events', async (name) => {
    const recorded = events(name);
    const listener = new ConverseStreamListener();
    const texts: string[] = [];
    const done: { id: string; arguments: string }[] = [];
    listener.on('content', (event) => texts.push(event.delta));
    listener.on('tool_call.done', (event) => done.push(event));
    const response = await collectConverse(asSse(recorded), { listener });
    const deltas = recorded.flatMap((event) => (typeof event.contentBlockDelta?.delta.text === 'string' ? [event.contentBlockDelta.delta.text] : []));
    expect(texts.join('')).toBe(deltas.join(''));
    const stop = recorded.find((event) => event.messageStop)?.messageStop?.stopReason;
    expect(response.stopReason).toBe(stop);
    const starts = recorded.flatMap((event) => (event.contentBlockStart?.start.toolUse ? [event.contentBlockStart.start.toolUse] : []));
    expect(toToolCalls(response).map((call) => [call.id, call.name])).toEqual(starts.map((call) => [call.toolUseId, call.name]));
    expect(done.map((call) => JSON.parse(call.arguments))).toEqual(toToolCalls(response).map((call) => JSON.parse(call.arguments)));
    const usage = recorded.find((event) => event.metadata)?.metadata?.usage;
    expect(response.usage).toEqual(usage);
  });

  it.each(NAMES)('%s: the union form pushed event by event gives the same response as the SSE form', async (name) => {
    const listener = new ConverseStreamListener();
    for (const event of events(name)) listener.push(event);
    expect(listener.end()).toEqual(await collectConverse(asSse(events(name))));
  });

  it('a tool call without input text gets {} as its input and its arguments', async () => {
    const listener = new ConverseStreamListener();
    const done: string[] = [];
    listener.on('tool_call.done', (event) => done.push(event.arguments));
    const response = await collectConverse(asSse(events('amazon-bedrock-tool-no-args.chunks.txt')), { listener });
    expect(done).toEqual(['{}']);
    expect(response.output.message.content).toEqual([
      { text: "I'll update the issue list for you." },
      { toolUse: { toolUseId: 'tool-use-id', name: 'updateIssueList', input: {} } },
    ]);
  });
});

const start: ConverseStreamOutput = { messageStart: { role: 'assistant' } };
const stop = (stopReason: string): ConverseStreamOutput => ({ messageStop: { stopReason } });

describe('ConverseStreamListener', () => {
  it('reasoning: text deltas, the signature, and a redacted block, each kept as Converse sends them back', () => {
    const listener = new ConverseStreamListener();
    const reasoning: string[] = [];
    listener.on('reasoning', (event) => reasoning.push(event.snapshot));
    for (const event of [
      start,
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Think' } } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'ing' } } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-1' } } } },
      { contentBlockStop: { contentBlockIndex: 0 } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { reasoningContent: { redactedContent: 'b6' } } } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { reasoningContent: { redactedContent: '4==' } } } },
      { contentBlockStop: { contentBlockIndex: 1 } },
      { contentBlockDelta: { contentBlockIndex: 2, delta: { text: 'Done' } } },
      stop('end_turn'),
    ] satisfies ConverseStreamOutput[]) {
      listener.push(event);
    }
    expect(reasoning).toEqual(['Think', 'Thinking']);
    expect(listener.end().output.message.content).toEqual([
      { reasoningContent: { reasoningText: { text: 'Thinking', signature: 'sig-1' } } },
      { reasoningContent: { redactedContent: 'b64==' } },
      { text: 'Done' },
    ]);
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'tool_calls'],
    ['max_tokens', 'length'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
    ['some_new_reason', 'some_new_reason'],
  ])('stop reason %s is the finish reason %s; the stream completes once the usage came too', (reason, finish) => {
    const listener = new ConverseStreamListener();
    const finishes: string[] = [];
    listener.on('finish', (event) => finishes.push(event.finishReason));
    listener.push(start);
    listener.push(stop(reason));
    expect(listener.status).toBe('streaming');
    listener.push({ metadata: { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } } });
    expect(listener.status).toBe('completed');
    expect(finishes).toEqual([finish]);
    expect(toFinishReason(reason)).toBe(finish);
  });

  it('usage: cache reads and writes count in the prompt, as in Messages', () => {
    expect(toChatUsage({ inputTokens: 10, outputTokens: 5, totalTokens: 115, cacheReadInputTokens: 60, cacheWriteInputTokens: 40 })).toEqual({
      prompt_tokens: 110,
      completion_tokens: 5,
      total_tokens: 115,
      prompt_tokens_details: { cached_tokens: 60, cache_creation_tokens: 40 },
    });
  });

  it('a tool input that is not JSON is a ProtocolError at its contentBlockStop, with the response so far', () => {
    const listener = new ConverseStreamListener();
    listener.push(start);
    listener.push({ contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Calling' } } });
    listener.push({ contentBlockStart: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'f' } } } });
    listener.push({ contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '{"a":' } } } });
    let error: unknown;
    try {
      listener.push({ contentBlockStop: { contentBlockIndex: 1 } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).partial).toMatchObject({ output: { message: { content: [{ text: 'Calling' }, { toolUse: { toolUseId: 't1' } }] } } });
    expect(listener.status).toBe('failed');
  });

  it('a stream that ends before messageStop, or inside a toolUse block, is incomplete, never success', () => {
    const early = new ConverseStreamListener();
    early.push(start);
    early.push({ contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hi' } } });
    expect(() => early.end()).toThrow(StreamIncompleteError);
    expect(early.error?.partial).toMatchObject({ output: { message: { content: [{ text: 'Hi' }] } } });

    const open = new ConverseStreamListener();
    open.push({ contentBlockStart: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: 'f' } } } });
    open.push(stop('tool_use'));
    expect(() => open.end()).toThrow(/inside a toolUse block/);
  });

  it('a stream that ends after messageStop without metadata completes, without usage', () => {
    const listener = new ConverseStreamListener();
    listener.push(start);
    listener.push({ contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hi' } } });
    listener.push(stop('end_turn'));
    expect(listener.end()).toEqual({ output: { message: { role: 'assistant', content: [{ text: 'Hi' }] } }, stopReason: 'end_turn' });
  });

  it('an event that is not a Converse event is a ProtocolError; nothing before the first event means no partial', () => {
    const listener = new ConverseStreamListener();
    expect(() => listener.pushSse({ event: 'chunk', data: '{"bytes":"e30="}' })).toThrow(ProtocolError);
    expect(listener.error?.partial).toBeUndefined();
    listener.reset();
    expect(listener.status).toBe('pending');
    expect(() => listener.push({ contentBlockDelta: { contentBlockIndex: 0, delta: {} } })).toThrow(/unknown kind/);
  });

  it('a toolUse delta outside a toolUse block is a ProtocolError', () => {
    const listener = new ConverseStreamListener();
    listener.push({ contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hi' } } });
    expect(() => listener.push({ contentBlockDelta: { contentBlockIndex: 0, delta: { toolUse: { input: '{}' } } } })).toThrow(
      /outside a toolUse block/,
    );
  });
});
