// The fault suite's MCP section: real MCP servers (the official SDK's, over Streamable HTTP on 127.0.0.1) that
// misbehave. The client keeps every good tool usable, names what it dropped or renamed, and ends in bounded time.
import { runChatToolLoop } from '@ai4ts/chat';
import { ConnectionError, executeToolCalls, type Logger, Transport } from '@ai4ts/core';
import { connectMcp, McpClient, type McpHttpOptions } from '@ai4ts/mcp';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type HostileBehaviour, type HostileServer, hostileServer, tool } from './hostile-fixture.ts';

let server: HostileServer | undefined;
let mcp: McpClient | undefined;
let model: MockModel | undefined;
afterEach(async () => {
  await mcp?.close();
  await server?.close();
  await model?.close();
  server = mcp = model = undefined;
});

const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
const logger: Logger = {
  debug() {},
  info() {},
  warn: (message, fields) => void warnings.push({ message, fields }),
  error() {},
};
afterEach(() => {
  warnings.length = 0;
});

async function connect(behaviour: HostileBehaviour, options: Partial<McpHttpOptions> = {}): Promise<McpClient> {
  server = await hostileServer(behaviour);
  mcp = await connectMcp({ url: server.url, logger, ...options });
  return mcp;
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

describe('MCP hostile servers', { timeout: 20_000 }, () => {
  it('names that collide once sanitised (a.b and a_b) are made unique with a warning; each call reaches its own tool', async () => {
    const mcp = await connect({
      list: () => ({ tools: [tool('a.b'), tool('a_b'), tool('a b')] }),
      call: (name, args) => text(`${name} got ${JSON.stringify(args)}`),
    });
    const tools = await mcp.tools();
    // A name that needs no change keeps it; the sanitised ones get a suffix.
    expect(tools.map((t) => t.name)).toEqual(['a_b_2', 'a_b', 'a_b_3']);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/tool "a\.b" is called "a_b_2": "a_b" is taken/),
      expect.stringMatching(/tool "a b" is called "a_b_3": "a_b" is taken/),
    ]);

    model = await startMockModel({
      script: [
        {
          toolCalls: [
            { id: 'c1', name: 'a_b_2', arguments: { x: 1 } },
            { id: 'c2', name: 'a_b', arguments: { x: 2 } },
            { id: 'c3', name: 'a_b_3', arguments: { x: 3 } },
          ],
        },
        { content: 'Done.' },
      ],
    });
    const transport = new Transport({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 });
    const result = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: [{ role: 'user', content: 'Go' }],
      mcp: [mcp],
    });
    expect(result.text).toBe('Done.');
    expect(server?.calls).toEqual([
      { name: 'a.b', args: { x: 1 } },
      { name: 'a_b', args: { x: 2 } },
      { name: 'a b', args: { x: 3 } },
    ]);
    expect(result.steps[0]?.toolResults.map((r) => r.isError)).toEqual([false, false, false]);
  });

  it('a prefix that makes two names collide is handled the same way', async () => {
    const mcp = await connect({ list: () => ({ tools: [tool('x.y'), tool('x-y'), tool('x_y')] }) });
    const tools = await mcp.tools({ prefix: 'p.' });
    expect(tools.map((t) => t.name)).toEqual(['p_x_y_2', 'p_x-y', 'p_x_y']);
  });

  it('endless pagination stops at maxListPages with a warning; the tools listed so far stay usable', async () => {
    let page = 0;
    const mcp = await connect(
      { list: () => ({ tools: [tool(`t${++page}`)], nextCursor: `c${page}` }), call: (name) => text(name) },
      { maxListPages: 5 },
    );
    const tools = await mcp.tools();
    expect(tools.map((t) => t.name)).toEqual(['t1', 't2', 't3', 't4', 't5']);
    expect(server?.listed).toEqual([undefined, 'c1', 'c2', 'c3', 'c4']);
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/tools\/list stopped after 5 pages/)]);
    const [result] = await executeToolCalls([{ id: 'c', name: 't3', arguments: '{}' }], tools);
    expect(result).toMatchObject({ isError: false, content: 't3' });
  });

  it('by default at most 1,000 tools are kept, whatever the server keeps sending', async () => {
    let page = 0;
    const mcp = await connect({
      list: () => {
        page++;
        return { tools: Array.from({ length: 300 }, (_, i) => tool(`p${page}_${i}`)), nextCursor: `c${page}` };
      },
    });
    const tools = await mcp.tools();
    expect(tools).toHaveLength(1_000);
    expect(server?.listed).toHaveLength(4);
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/more than 1000 tools/)]);
  });

  it('refuses limits that are not positive integers', () => {
    expect(() => new McpClient({ url: 'http://127.0.0.1:1/mcp', maxListPages: 0 })).toThrow(/maxListPages must be a positive integer/);
    expect(() => new McpClient({ url: 'http://127.0.0.1:1/mcp', maxTools: 1.5 })).toThrow(RangeError);
    expect(() => new McpClient({ url: 'http://127.0.0.1:1/mcp', timeout: 0 })).toThrow(RangeError);
  });

  it('a repeated cursor ends the listing with a warning', async () => {
    let page = 0;
    const mcp = await connect({ list: () => ({ tools: [tool(`t${++page}`)], nextCursor: 'again' }) });
    expect((await mcp.tools()).map((t) => t.name)).toEqual(['t1', 't2']);
    expect(server?.listed).toEqual([undefined, 'again']);
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/repeated the cursor "again"/)]);
  });

  it('malformed tools are dropped with a warning naming each; the good ones stay usable', async () => {
    const mcp = await connect({
      list: () => ({
        tools: [
          tool('good', { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }),
          tool('stringy', { type: 'string' }),
          { name: 'schemaless' },
          { inputSchema: { type: 'object' } },
          'not even an object',
          tool('cycle', { type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { $ref: '#/$defs/a' } } }),
        ],
      }),
      call: (name, args) => text(`${name}: ${JSON.stringify(args)}`),
    });
    const tools = await mcp.tools();
    expect(tools.map((t) => t.name)).toEqual(['good', 'cycle']);
    const dropped = warnings.map((w) => w.message);
    expect(dropped).toHaveLength(4);
    expect(dropped[0]).toMatch(/tool "stringy" dropped: .*inputSchema/);
    expect(dropped[1]).toMatch(/tool "schemaless" dropped: .*inputSchema/);
    expect(dropped[2]).toMatch(/tool #4 dropped: .*name/);
    expect(dropped[3]).toMatch(/tool #5 dropped/);
    expect(warnings[0]?.fields).toMatchObject({ tool: 'stringy' });

    const [good, cycle] = await executeToolCalls(
      [
        { id: 'c1', name: 'good', arguments: '{"n":1}' },
        { id: 'c2', name: 'cycle', arguments: '{"x":1}' },
      ],
      tools,
    );
    expect(good).toMatchObject({ isError: false, content: 'good: {"n":1}' });
    // The cycle is that tool's error, told to the model; it never reaches the server.
    expect(cycle?.isError).toBe(true);
    expect(String(cycle?.output)).toMatch(/Tool "cycle" cannot validate its arguments: .*\$ref cycle/);
    expect(server?.calls.map((c) => c.name)).toEqual(['good']);
  });

  it('a listing that is no tool list at all is a ConnectionError, not a raw ZodError', async () => {
    const mcp = await connect({ list: () => ({ tools: 'none today' }) });
    const failed = mcp.tools();
    await expect(failed).rejects.toBeInstanceOf(ConnectionError);
    await expect(failed).rejects.toThrow(/MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp: could not list its tools: the answer is no tool list: .*tools/);
  });

  it('a server that never answers tools/call: the call times out as an error result and is cancelled', async () => {
    const mcp = await connect(
      { list: () => ({ tools: [tool('hang'), tool('ok')] }), call: (name) => (name === 'ok' ? text('ok') : new Promise(() => {})) },
      { timeout: 300 },
    );
    const [hung, ok] = await executeToolCalls(
      [
        { id: 'c1', name: 'hang', arguments: '{}' },
        { id: 'c2', name: 'ok', arguments: '{}' },
      ],
      await mcp.tools(),
    );
    expect(hung).toMatchObject({ isError: true });
    expect(String(hung?.output)).toMatch(/timed out after 300 ms/);
    expect(ok).toMatchObject({ isError: false, content: 'ok' });
    await expect.poll(() => server?.cancelled.length).toBe(1);
  });

  it('a server that never answers tools/list: tools() fails within the timeout', async () => {
    const mcp = await connect({ list: () => new Promise(() => {}) }, { timeout: 300 });
    await expect(mcp.tools()).rejects.toBeInstanceOf(ConnectionError);
  });

  it('a huge result (8 MiB of text) arrives whole', async () => {
    const huge = 'x'.repeat(8 * 1024 * 1024);
    const mcp = await connect({ list: () => ({ tools: [tool('huge')] }), call: () => text(huge) });
    const [result] = await executeToolCalls([{ id: 'c', name: 'huge', arguments: '{}' }], await mcp.tools());
    expect(result?.isError).toBe(false);
    expect(result?.content).toHaveLength(huge.length);
  });

  it("structured results are still checked against the tool's outputSchema", async () => {
    const outputSchema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    const mcp = await connect({
      list: () => ({ tools: [{ ...tool('right'), outputSchema }, { ...tool('wrong'), outputSchema }] }),
      call: (name) => ({
        content: [{ type: 'text', text: name }],
        structuredContent: name === 'right' ? { n: 1 } : { n: 'one' },
      }),
    });
    const [right, wrong] = await executeToolCalls(
      [
        { id: 'c1', name: 'right', arguments: '{}' },
        { id: 'c2', name: 'wrong', arguments: '{}' },
      ],
      await mcp.tools(),
    );
    expect(right).toMatchObject({ isError: false, output: { n: 1 } });
    expect(wrong?.isError).toBe(true);
    expect(String(wrong?.output)).toMatch(/does not match the tool's output schema/);
  });
});
