import { AbortError, defineTool, executeToolCalls, TimeoutError, ToolError, validateToolCall } from '@ai4ts/core';
import { toolResultContent } from '@ai4ts/core/internal';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { deferred } from './tools.fake-adapter.js';

function addTool() {
  const seen: unknown[] = [];
  const tool = defineTool({
    name: 'add',
    parameters: z.object({ a: z.number(), b: z.number().default(1) }),
    execute: (args) => {
      seen.push(args);
      return { sum: args.a + args.b };
    },
  });
  return { tool, seen };
}

describe('validateToolCall', () => {
  it('treats an empty argument string as {}', async () => {
    const tool = defineTool({ name: 'now', parameters: z.object({ tz: z.string().default('UTC') }) });
    const checked = await validateToolCall({ id: 'c1', name: 'now', arguments: '' }, [tool]);
    expect(checked).toEqual({ tool, args: { tz: 'UTC' } });
  });

  it('names the cause: invalid JSON, schema issues, unknown tool', async () => {
    const { tool } = addTool();
    const badJson = await validateToolCall({ id: 'c1', name: 'add', arguments: '{"a": 1,' }, [tool]);
    expect(badJson).toBeInstanceOf(ToolError);
    expect((badJson as ToolError).message).toMatch(/^Invalid JSON in the arguments of tool "add": /);
    expect((badJson as ToolError).toolCallId).toBe('c1');

    const badArgs = await validateToolCall({ id: 'c2', name: 'add', arguments: '{"a": "one", "b": 2}' }, [tool]);
    expect((badArgs as ToolError).message).toMatch(/^Invalid arguments for tool "add": a: .*expected number/);

    const unknown = await validateToolCall({ id: 'c3', name: 'mul', arguments: '{}' }, [tool]);
    expect((unknown as ToolError).message).toBe('Unknown tool "mul"; available tools: add');
    expect((unknown as ToolError).toolName).toBe('mul');
  });
});

describe('executeToolCalls', () => {
  it('runs valid calls with parsed output and turns every failure into an error result without running it', async () => {
    const { tool, seen } = addTool();
    const results = await executeToolCalls(
      [
        { id: 'c1', name: 'add', arguments: '{"a": 2}' },
        { id: 'c2', name: 'add', arguments: '{"a": 2' },
        { id: 'c3', name: 'add', arguments: '{"a": true}' },
        { id: 'c4', name: 'nope', arguments: '{}' },
      ],
      [tool],
    );
    expect(seen).toEqual([{ a: 2, b: 1 }]);
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ['c1', false],
      ['c2', true],
      ['c3', true],
      ['c4', true],
    ]);
    expect(results[0]).toMatchObject({ toolName: 'add', output: { sum: 3 }, content: '{"sum":3}' });
    expect(results[0]?.durationMs).toBeGreaterThanOrEqual(0);
    for (const failed of results.slice(1)) {
      expect(JSON.parse(failed.content)).toEqual({ error: failed.output });
      expect(failed.error).toBeInstanceOf(ToolError);
      expect(failed.durationMs).toBeUndefined();
    }
    expect(results[3]?.output).toBe('Unknown tool "nope"; available tools: add');
  });

  it('sends a string result as-is and other values as JSON', async () => {
    expect(toolResultContent('plain "text"')).toBe('plain "text"');
    expect(toolResultContent({ a: [1, null] })).toBe('{"a":[1,null]}');
    expect(toolResultContent(42)).toBe('42');
    expect(toolResultContent(undefined)).toBe('null');
    const bigint = defineTool({ name: 'big', parameters: z.object({}), execute: () => 1n });
    const [result] = await executeToolCalls([{ id: 'c', name: 'big', arguments: '{}' }], [bigint]);
    expect(result?.isError).toBe(true);
    expect(result?.output).toMatch(/^Tool "big" returned a value that is not JSON: /);
  });

  it('turns a throw into an error result naming the thrown message', async () => {
    const failing = defineTool({
      name: 'fail',
      parameters: z.object({}),
      execute: () => {
        throw new Error('disk full');
      },
    });
    const [result] = await executeToolCalls([{ id: 'c', name: 'fail', arguments: '{}' }], [failing]);
    expect(result).toMatchObject({ isError: true, content: '{"error":"Tool \\"fail\\" failed: disk full"}' });
    expect(result?.error?.cause).toEqual(new Error('disk full'));
  });

  it('times a tool out: its signal aborts and the call gets a timeout error result', async () => {
    const sawAbort = deferred<unknown>();
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      timeout: 20,
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            sawAbort.resolve(signal.reason);
            reject(signal.reason);
          });
        }),
    });
    const [result] = await executeToolCalls([{ id: 'c', name: 'slow', arguments: '{}' }], [slow]);
    expect(result?.isError).toBe(true);
    expect(result?.content).toBe('{"error":"Tool \\"slow\\" timed out after 20 ms"}');
    expect(result?.error).toBeInstanceOf(TimeoutError);
    expect(result?.error).toMatchObject({ phase: 'tool', timeoutMs: 20 });
    expect(await sawAbort.promise).toBe(result?.error);
  });

  it('keeps results in call order when tools finish out of order, and reports them as they finish', async () => {
    const gate = deferred();
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      execute: async () => {
        await gate.promise;
        return 'slow done';
      },
    });
    const fast = defineTool({
      name: 'fast',
      parameters: z.object({}),
      execute: () => {
        gate.resolve();
        return 'fast done';
      },
    });
    const finished: string[] = [];
    const results = await executeToolCalls(
      [
        { id: 'a', name: 'slow', arguments: '{}' },
        { id: 'b', name: 'fast', arguments: '{}' },
      ],
      [slow, fast],
      { onResult: (result) => finished.push(result.toolCallId) },
    );
    expect(finished).toEqual(['b', 'a']);
    expect(results.map((r) => r.content)).toEqual(['slow done', 'fast done']);
  });

  it('bounds concurrency', async () => {
    let running = 0;
    let peak = 0;
    const work = defineTool({
      name: 'work',
      parameters: z.object({}),
      execute: async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        return 'ok';
      },
    });
    const calls = Array.from({ length: 5 }, (_, i) => ({ id: `c${i}`, name: 'work', arguments: '{}' }));
    await executeToolCalls(calls, [work], { concurrency: 2 });
    expect(peak).toBe(2);
    peak = 0;
    await executeToolCalls(calls, [work], { concurrency: 1 });
    expect(peak).toBe(1);
    peak = 0;
    await executeToolCalls(calls, [work]);
    expect(peak).toBe(5);
  });

  it('asks onToolCall in call order before running; a denial becomes an error result', async () => {
    const { tool, seen } = addTool();
    const asked: string[] = [];
    const results = await executeToolCalls(
      [
        { id: 'c1', name: 'add', arguments: '{"a": 1}' },
        { id: 'c2', name: 'add', arguments: '{"a": 2}' },
        { id: 'c3', name: 'add', arguments: '{"a": 3}' },
        { id: 'c4', name: 'add', arguments: 'nope' },
      ],
      [tool],
      {
        onToolCall: async (call) => {
          asked.push(call.id);
          expect(call.tool).toBe(tool);
          if (call.id === 'c2') return 'deny';
          if (call.id === 'c3') return { deny: 'too large' };
          return 'allow';
        },
      },
    );
    expect(asked).toEqual(['c1', 'c2', 'c3']);
    expect(seen).toEqual([{ a: 1, b: 1 }]);
    expect(results.map((r) => r.content)).toEqual([
      '{"sum":2}',
      '{"error":"The call to tool \\"add\\" was denied"}',
      '{"error":"The call to tool \\"add\\" was denied: too large"}',
      expect.stringMatching(/^\{"error":"Invalid JSON/),
    ]);
  });

  it('passes ctx and rejects with AbortError when aborted mid-run; the tool sees its signal abort', async () => {
    const controller = new AbortController();
    const started = deferred();
    const aborted = deferred();
    const contexts: unknown[] = [];
    const wait = defineTool({
      name: 'wait',
      parameters: z.object({}),
      execute: (_args, context) => {
        contexts.push({ toolCallId: context.toolCallId, step: context.step, messages: context.messages });
        context.signal.addEventListener('abort', () => aborted.resolve());
        started.resolve();
        return new Promise(() => {});
      },
    });
    const run = executeToolCalls([{ id: 'c9', name: 'wait', arguments: '{}' }], [wait], {
      signal: controller.signal,
      step: 3,
      messages: ['m'],
    });
    await started.promise;
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(AbortError);
    await aborted.promise;
    expect(contexts).toEqual([{ toolCallId: 'c9', step: 3, messages: ['m'] }]);
  });
});
