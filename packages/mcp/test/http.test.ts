import { Transport } from '@ai4ts/core';
import { connectMcp, type McpClient } from '@ai4ts/mcp';
import { runMessagesToolLoop, streamMessagesToolLoop } from '@ai4ts/messages';
import { runResponsesToolLoop } from '@ai4ts/responses';
import { type MockModel, type MockScript, startMockModel } from '@ai4ts/testing';
import { AbortError, ConnectionError } from '@ai4ts/core';
import { afterEach, describe, expect, it } from 'vitest';
import { PNG } from './fixtures/server.mjs';
import { type HttpFixture, sseOnlyFixture, streamableFixture } from './http-fixture.ts';
import { until } from './helpers.ts';

let model: MockModel | undefined;
let mcp: McpClient | undefined;
let server: HttpFixture | undefined;
afterEach(async () => {
  await mcp?.close();
  await model?.close();
  await server?.close();
  model = mcp = server = undefined;
});

async function setup(script: MockScript, fixture = streamableFixture) {
  server = await fixture();
  mcp = await connectMcp({ url: server.url, headers: { Authorization: 'Bearer mcp-token' } });
  model = await startMockModel({ script });
  return { transport: new Transport({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 }), mcp, server };
}

const calls = [
  { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } },
  { id: 'call_chart', name: 'chart', arguments: { title: 'sales' } },
  { id: 'call_fail', name: 'fail', arguments: {} },
];

describe('connectMcp over Streamable HTTP', { timeout: 20_000 }, () => {
  it('the Responses loop: image results as input_image parts, the rest as text, in the next request', async () => {
    const { transport, mcp, server } = await setup([{ toolCalls: calls }, { content: 'Done.' }]);
    const result = await runResponsesToolLoop(transport, { model: 'mock-model', input: 'Go', mcp: [mcp] });
    expect(result.text).toBe('Done.');
    const second = model?.requests[1]?.body as { input: Record<string, unknown>[] };
    const outputs = second.input.filter((item) => item.type === 'function_call_output');
    expect(outputs).toEqual([
      { type: 'function_call_output', call_id: 'call_add', output: '5' },
      {
        type: 'function_call_output',
        call_id: 'call_chart',
        output: [
          { type: 'input_text', text: 'chart: sales' },
          { type: 'input_image', image_url: `data:image/png;base64,${PNG}` },
        ],
      },
      {
        type: 'function_call_output',
        call_id: 'call_fail',
        output: JSON.stringify({ error: 'the fail tool failed' }),
      },
    ]);
    const first = model?.requests[0]?.body as { tools: { name: string; parameters: unknown }[] };
    expect(first.tools.find((tool) => tool.name === 'add')).toMatchObject({
      type: 'function',
      parameters: { type: 'object', required: ['a', 'b'] },
      strict: false,
    });
    expect(server.records.map((record) => record.call)).toEqual(['add', 'chart', 'fail']);
    expect(server.requests.every((request) => request.authorization === 'Bearer mcp-token')).toBe(true);
  });

  it('the Messages loop: image results as image blocks, errors with is_error, in the next request', async () => {
    const { transport, mcp } = await setup([{ toolCalls: calls }, { content: 'Done.' }]);
    const result = await runMessagesToolLoop(transport, {
      model: 'mock-model',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Go' }],
      mcp: [mcp],
    });
    expect(result.text).toBe('Done.');
    const second = model?.requests[1]?.body as { messages: { role: string; content: unknown }[] };
    expect(second.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_add', content: '5' },
        {
          type: 'tool_result',
          tool_use_id: 'call_chart',
          content: [
            { type: 'text', text: 'chart: sales' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        {
          type: 'tool_result',
          tool_use_id: 'call_fail',
          content: JSON.stringify({ error: 'the fail tool failed' }),
          is_error: true,
        },
      ],
    });
    const first = model?.requests[0]?.body as { tools: { name: string; input_schema: unknown }[] };
    expect(first.tools.map((tool) => tool.name)).toEqual(['add', 'slow', 'fail', 'chart', 'crash', 'grow']);
  });

  it('aborting a streamed Messages loop cancels the call on the server', async () => {
    const { transport, mcp, server } = await setup([
      { toolCalls: [{ id: 'call_slow', name: 'slow', arguments: { ms: 10_000 } }] },
    ]);
    const controller = new AbortController();
    const stream = streamMessagesToolLoop(
      transport,
      { model: 'mock-model', max_tokens: 256, messages: [{ role: 'user', content: 'Go' }], mcp: [mcp] },
      { signal: controller.signal },
    );
    stream.on('tool.progress', (event) => {
      if (event.progress === 2) controller.abort();
    });
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
    await until(() => server.records.some((record) => record.cancelled === 'slow'), 'the cancellation');
  });

  it('a server that went away: the call is an error result, the loop goes on, and connecting fails clearly', async () => {
    const { transport, mcp, server } = await setup([
      { toolCalls: [{ id: 'call_add', name: 'add', arguments: { a: 1, b: 2 } }] },
      { content: 'The server is down.' },
    ]);
    await mcp.tools();
    await server.close();
    const result = await runResponsesToolLoop(transport, { model: 'mock-model', input: 'Go', tools: await mcp.tools() });
    expect(result.text).toBe('The server is down.');
    const failed = result.steps[0]?.toolResults[0];
    expect(failed?.isError).toBe(true);
    expect(String(failed?.output)).toMatch(/MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp/);
    await expect(connectMcp({ url: server.url })).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('connectMcp after the server forgot the session (a restart)', () => {
  it('the call in that session is an error result; the next call opens a new session and works', async () => {
    const { transport, mcp, server } = await setup([
      { toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ id: 'call_2', name: 'add', arguments: { a: 3, b: 4 } }] },
      { content: 'Back.' },
    ]);
    await mcp.tools();
    server.forgetSessions();
    const result = await runResponsesToolLoop(transport, { model: 'mock-model', input: 'Go', mcp: [mcp] });
    expect(result.text).toBe('Back.');
    // Step 1 listed the tools in the old session: the server said 404 there, so the call failed clearly.
    expect(result.steps[0]?.toolResults[0]?.isError).toBe(true);
    expect(String(result.steps[0]?.toolResults[0]?.output)).toMatch(/404|Session not found/);
    expect(result.steps[1]?.toolResults[0]).toMatchObject({ isError: false, content: '7' });
    expect(server.records.map((record) => record.call)).toEqual(['add']);
  });
});

describe('connectMcp over HTTP+SSE (the older transport)', () => {
  it('falls back when the server refuses the Streamable HTTP handshake, and calls tools over SSE', async () => {
    const { transport, mcp, server } = await setup(
      [{ toolCalls: [{ id: 'call_add', name: 'add', arguments: { a: 4, b: 5 } }] }, { content: 'Nine.' }],
      sseOnlyFixture,
    );
    expect(server.requests[0]).toMatchObject({ method: 'POST', url: '/sse' });
    expect(server.requests.some((request) => request.method === 'GET' && request.url === '/sse')).toBe(true);
    const result = await runMessagesToolLoop(transport, {
      model: 'mock-model',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Go' }],
      mcp: [mcp],
    });
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ isError: false, content: '9' });
    expect(server.records).toEqual([{ call: 'add', args: { a: 4, b: 5 } }]);
  });
});
