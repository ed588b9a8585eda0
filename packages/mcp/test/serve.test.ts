import { fileURLToPath } from 'node:url';
import { defineTool, ToolContent } from '@ai4ts/core';
import { type ServedMcp, serveMcp } from '@ai4ts/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, type TestServer } from '@ai4ts/test-kit';
import * as z from 'zod';

const aborted: string[] = [];
const tools = [
  defineTool({
    name: 'add',
    description: 'Adds two numbers',
    parameters: z.object({ a: z.number(), b: z.number().default(0) }),
    execute: ({ a, b }) => ({ sum: a + b }),
  }),
  defineTool({
    name: 'wait',
    parameters: z.object({ ms: z.number() }),
    timeout: 2_000,
    execute: ({ ms }, { signal, progress }) => {
      progress({ progress: 1, total: 2, message: 'started' });
      return new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve(`waited ${ms}`), ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          aborted.push(String(signal.reason));
          resolve('aborted');
        });
      });
    },
  }),
  defineTool({
    name: 'boom',
    parameters: z.object({}),
    execute: () => {
      throw new Error('kaboom');
    },
  }),
  defineTool({
    name: 'pixel',
    parameters: z.object({}),
    execute: () => new ToolContent([{ type: 'text', text: 'a pixel' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }]),
  }),
];

let served: ServedMcp | undefined;
let http: TestServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await served?.close();
  await http?.close();
  served = http = client = undefined;
  aborted.length = 0;
});

async function overNodeHandler(): Promise<Client> {
  served = serveMcp(tools, { name: 'ai4ts-tools', version: '1.2.3', instructions: 'Use add to add.' });
  // The SDK's transport reads the request body itself.
  http = await serve(served.handler, { readBody: false });
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('any/path', http.url)));
  return client;
}

describe('serveMcp, called by the official SDK client', { timeout: 30_000 }, () => {
  it('over the node:http handler: lists the tools with their JSON Schemas, says who it is', async () => {
    const client = await overNodeHandler();
    expect(client.getServerVersion()).toMatchObject({ name: 'ai4ts-tools', version: '1.2.3' });
    expect(client.getInstructions()).toBe('Use add to add.');
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual(['add', 'wait', 'boom', 'pixel']);
    expect(listed[0]).toEqual({ name: 'add', description: 'Adds two numbers', inputSchema: tools[0]?.jsonSchema });
  });

  it('calls: a value as text and structuredContent, parts as text and image, errors and invalid arguments as isError', async () => {
    const client = await overNodeHandler();
    expect(await client.callTool({ name: 'add', arguments: { a: 2 } })).toEqual({
      content: [{ type: 'text', text: '{"sum":2}' }],
      structuredContent: { sum: 2 },
    });
    expect(await client.callTool({ name: 'pixel', arguments: {} })).toEqual({
      content: [
        { type: 'text', text: 'a pixel' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
    });
    const invalid = await client.callTool({ name: 'add', arguments: { a: 'two' } });
    expect(invalid.isError).toBe(true);
    expect(JSON.stringify(invalid.content)).toMatch(/Invalid arguments for tool \\"add\\": a: /);
    const thrown = await client.callTool({ name: 'boom', arguments: {} });
    expect(thrown).toEqual({ content: [{ type: 'text', text: 'Tool "boom" failed: kaboom' }], isError: true });
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toBeInstanceOf(McpError);
  });

  it('progress reaches the client; a cancelled request aborts the tool; a timeout is an isError result', async () => {
    const client = await overNodeHandler();
    const progress: unknown[] = [];
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: { ms: 10_000 } }, undefined, {
      signal: controller.signal,
      onprogress: (update) => {
        progress.push(update);
        controller.abort('user left');
      },
    });
    await expect(call).rejects.toThrow();
    expect(progress).toEqual([{ progress: 1, total: 2, message: 'started' }]);
    await expect.poll(() => aborted).toEqual(['user left']);
    const late = await client.callTool({ name: 'wait', arguments: { ms: 10_000 } });
    expect(late).toEqual({ content: [{ type: 'text', text: 'Tool "wait" timed out after 2000 ms' }], isError: true });
  });

  it('over the fetch handler: the same server, Request in and Response out, one session per client', async () => {
    // A host name other than this machine's must be allowed (DNS rebinding protection, serve-guard.test.ts).
    served = serveMcp(tools, { name: 'ai4ts-tools', version: '1.2.3', allowedHosts: ['edge.example'] });
    const handler = served;
    client = new Client({ name: 'test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('http://edge.example/mcp'), {
      fetch: (url, init) => handler.fetch(new Request(url, init)),
    });
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).toMatchObject({
      structuredContent: { sum: 3 },
    });
    const stranger = await handler.fetch(
      new Request('http://edge.example/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'nope' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    );
    expect(stranger.status).toBe(404);
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
  });

  it('over stdio: examples/mcp-server.ts, started by the SDK client as a host would', async () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'examples/mcp-server.ts'], cwd: root, stderr: 'ignore' }),
    );
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual(['get_weather', 'convert_temperature']);
    expect(await client.callTool({ name: 'get_weather', arguments: { city: 'Paris' } })).toMatchObject({
      structuredContent: { city: 'Paris', temperature: 18, unit: 'celsius' },
    });
  });

  it('refuses a passthrough tool and two tools of one name', () => {
    const passthrough = defineTool({ name: 'host_only', parameters: z.object({}) });
    expect(() => serveMcp([passthrough], { name: 'x', version: '1' })).toThrow(/no execute function/);
    expect(() => serveMcp([tools[0], tools[0]].filter((tool) => tool !== undefined), { name: 'x', version: '1' })).toThrow(
      /Two tools are named "add"/,
    );
  });
});
