import { type ChatLoopRequest, runChatToolLoop, streamChatToolLoop } from '@ai4ts/chat';
import { AbortError, ConnectionError, runTool, Transport, type ToolLoopEvent } from '@ai4ts/core';
import { connectMcp, type McpClient } from '@ai4ts/mcp';
import { type MockModel, type MockScript, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, stdioFixture, until } from './helpers.ts';

let model: MockModel | undefined;
let mcp: McpClient | undefined;
let fixture: ReturnType<typeof stdioFixture> | undefined;
afterEach(async () => {
  await mcp?.close();
  await model?.close();
  fixture?.dispose();
  model = mcp = fixture = undefined;
});

async function setup(script: MockScript, timeout?: number) {
  fixture = stdioFixture();
  mcp = await connectMcp({ ...fixture.options, ...(timeout === undefined ? {} : { timeout }) });
  model = await startMockModel({ script });
  return { transport: new Transport({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 }), mcp, fixture };
}

function chatBodies(): { messages: Record<string, unknown>[]; tools?: { function: { name: string } }[] }[] {
  return (model?.requests ?? []).map((request) => request.body as never);
}

const ask = (content: string): ChatLoopRequest['messages'] => [{ role: 'user', content }];

// Each test starts a server process (two when it restarts one): seconds on a busy machine.
describe('connectMcp over stdio', { timeout: 30_000 }, () => {
  it("lists the server's tools with their JSON Schemas, filtered and prefixed on request", async () => {
    const { mcp } = await setup([]);
    const tools = await mcp.tools();
    expect(tools.map((tool) => tool.name)).toEqual(['add', 'slow', 'fail', 'chart', 'crash', 'grow']);
    const add = tools[0];
    expect(add?.description).toBe('Adds two numbers');
    expect(add?.jsonSchema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
    const chosen = await mcp.tools({ prefix: 'fx.', include: ['add', 'chart', 'fail'], exclude: ['fail'] });
    expect(chosen.map((tool) => tool.name)).toEqual(['fx_add', 'fx_chart']);
  });

  it('runs the chat loop with `mcp: [client]`: tools on the wire, results in the next request, invalid arguments kept from the server', async () => {
    const { transport, mcp, fixture } = await setup([
      {
        toolCalls: [
          { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } },
          { id: 'call_chart', name: 'chart', arguments: { title: 'sales' } },
          { id: 'call_bad', name: 'add', arguments: { a: 'two', b: 3 } },
          { id: 'call_fail', name: 'fail', arguments: {} },
        ],
      },
      { content: 'Done.' },
    ]);
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: ask('Go'), mcp: [mcp] });
    expect(result.text).toBe('Done.');

    const [first, second] = chatBodies();
    expect(first?.tools?.map((tool) => tool.function.name)).toEqual(['add', 'slow', 'fail', 'chart', 'crash', 'grow']);
    expect(first).not.toHaveProperty('mcp');
    const toolMessages = second?.messages.slice(2);
    expect(toolMessages?.[0]).toEqual({ role: 'tool', tool_call_id: 'call_add', content: '5' });
    expect(toolMessages?.[1]).toEqual({ role: 'tool', tool_call_id: 'call_chart', content: 'chart: sales\n[image: image/png]' });
    expect(toolMessages?.[2]).toMatchObject({ role: 'tool', tool_call_id: 'call_bad' });
    expect(JSON.parse(String(toolMessages?.[2]?.content)).error).toMatch(/Invalid arguments for tool "add": a: /);
    expect(JSON.parse(String(toolMessages?.[3]?.content)).error).toContain('the fail tool failed');

    const [add, chart, bad, fail] = result.steps[0]?.toolResults ?? [];
    expect(add).toMatchObject({ isError: false, output: { sum: 5 } });
    expect(chart?.parts).toEqual([
      { type: 'text', text: 'chart: sales' },
      { type: 'image', data: expect.any(String), mimeType: 'image/png' },
    ]);
    expect(bad?.isError).toBe(true);
    expect(fail?.isError).toBe(true);
    // The server saw the valid calls only.
    expect(fixture.records().map((record) => record.call)).toEqual(['add', 'chart', 'fail']);
  });

  it('a crash mid-call is that call’s error result; the next call starts the server again', async () => {
    const { transport, mcp, fixture } = await setup([
      { toolCalls: [{ id: 'call_crash', name: 'crash', arguments: {} }] },
      { toolCalls: [{ id: 'call_add', name: 'add', arguments: { a: 1, b: 1 } }] },
      { content: 'Recovered.' },
    ]);
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: ask('Go'), mcp: [mcp] });
    expect(result.text).toBe('Recovered.');
    const crash = result.steps[0]?.toolResults[0];
    expect(crash?.isError).toBe(true);
    expect(String(crash?.output)).toMatch(/Connection closed/);
    expect(result.steps[1]?.toolResults[0]).toMatchObject({ isError: false, content: '2' });
    const [crashed, added] = fixture.records();
    expect(crashed?.call).toBe('crash');
    expect(added?.call).toBe('add');
    expect(added?.pid).not.toBe(crashed?.pid);
  });

  it('a call past the timeout is an error result and the server sees it cancelled', async () => {
    const { transport, mcp, fixture } = await setup(
      [{ toolCalls: [{ id: 'call_slow', name: 'slow', arguments: { ms: 10_000 } }] }, { content: 'Too slow.' }],
      300,
    );
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: ask('Go'), mcp: [mcp] });
    expect(result.text).toBe('Too slow.');
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ isError: true, error: { name: 'TimeoutError' } });
    await until(() => fixture.records().some((record) => record.cancelled === 'slow'), 'the cancellation');
  });

  it('streams progress as tool.progress events; aborting the loop cancels the call on the server', async () => {
    const { transport, mcp, fixture } = await setup([
      { toolCalls: [{ id: 'call_slow', name: 'slow', arguments: { ms: 10_000 } }] },
    ]);
    const controller = new AbortController();
    const stream = streamChatToolLoop(
      transport,
      { model: 'mock-model', messages: ask('Go'), mcp: [mcp] },
      { signal: controller.signal },
    );
    const progress: ToolLoopEvent[] = [];
    stream.on('tool.progress', (event) => {
      progress.push(event);
      if (event.progress === 2) controller.abort();
    });
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
    expect(progress).toEqual([
      { type: 'tool.progress', id: 'call_slow', name: 'slow', progress: 1, total: 2, message: 'step 1', step: 1 },
      { type: 'tool.progress', id: 'call_slow', name: 'slow', progress: 2, total: 2, message: 'step 2', step: 1 },
    ]);
    await until(() => fixture.records().some((record) => record.cancelled === 'slow'), 'the cancellation');
  });

  it('notifications/tools/list_changed: the next step lists and offers the new tool', async () => {
    const { transport, mcp, fixture } = await setup([
      { toolCalls: [{ id: 'call_grow', name: 'grow', arguments: {} }] },
      { toolCalls: [{ id: 'call_late', name: 'late', arguments: {} }] },
      { content: 'Used the late tool.' },
    ]);
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: ask('Go'), mcp: [mcp] });
    expect(result.steps[1]?.toolResults[0]).toMatchObject({ isError: false, content: 'late answer' });
    const [first, second] = chatBodies();
    expect(first?.tools?.map((tool) => tool.function.name)).not.toContain('late');
    expect(second?.tools?.map((tool) => tool.function.name)).toContain('late');
    expect(fixture.records().map((record) => record.call)).toEqual(['grow', 'late']);
  });

  it('onToolCall approves MCP tools too: a denied call never reaches the server', async () => {
    const { transport, mcp, fixture } = await setup([
      { toolCalls: [{ id: 'call_add', name: 'add', arguments: { a: 1, b: 2 } }] },
      { content: 'Denied.' },
    ]);
    const seen: string[] = [];
    const result = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: ask('Go'),
      mcp: [mcp],
      onToolCall: (call) => {
        seen.push(`${call.name}:${JSON.stringify(call.args)}`);
        return { deny: 'not now' };
      },
    });
    expect(seen).toEqual(['add:{"a":1,"b":2}']);
    expect(result.steps[0]?.toolResults[0]?.content).toContain('not now');
    expect(fixture.records()).toEqual([]);
  });

  it('tools from `await mcp.tools()` work in `tools` beside the request’s own', async () => {
    const { transport, mcp } = await setup([
      { toolCalls: [{ id: 'call_add', name: 'calc_add', arguments: { a: 20, b: 22 } }] },
      { content: '42' },
    ]);
    const result = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: ask('Go'),
      tools: await mcp.tools({ prefix: 'calc_', include: ['add'] }),
    });
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ isError: false, content: '42' });
  });

  it('close() ends the server process; `await using` closes too; a command that cannot start is a ConnectionError', async () => {
    const { mcp, fixture } = await setup([]);
    const [add] = await mcp.tools({ include: ['add'] });
    if (!add) throw new Error('no add tool');
    const context = { signal: new AbortController().signal, toolCallId: 'call_1', step: 1, messages: [] };
    expect(await runTool(add, { a: 1, b: 1 }, context)).toMatchObject({ isError: false, content: '2' });
    const pid = fixture.records()[0]?.pid ?? 0;
    expect(alive(pid)).toBe(true);
    {
      await using scoped = mcp;
      expect(scoped).toBe(mcp);
    }
    await until(() => !alive(pid), 'the server to exit');
    await expect(connectMcp({ command: '/nonexistent/mcp-server' })).rejects.toBeInstanceOf(ConnectionError);
  });
});
